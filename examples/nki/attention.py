"""Fused causal self-attention for one head (NKI beta-2 style, after the
public fused-attention tutorial's structure): softmax(q k^T * scale, causal)
v with q, k given transposed ([d, seq]) so the PE contracts over d; the
sequence is processed in 128-query tiles against all key tiles."""
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def fused_self_attn_causal(q_t, k_t, v):
  d, seq = q_t.shape
  assert d <= 128 and seq % 128 == 0 and seq <= 512
  out = nl.ndarray((seq, d), dtype=nl.float32, buffer=nl.shared_hbm)
  scale = 1.0 / (d ** 0.5)
  k_sb = nl.ndarray((d, seq), dtype=k_t.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=k_sb, src=k_t)
  v_tiles = []
  for j in nl.affine_range(seq // 128):
    vt = nl.ndarray((128, d), dtype=v.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=vt, src=v[j * 128:(j + 1) * 128, :])
    v_tiles.append(vt)
  for i in nl.affine_range(seq // 128):
    q_sb = nl.ndarray((d, 128), dtype=q_t.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=q_sb, src=q_t[:, i * 128:(i + 1) * 128])
    s_ps = nl.ndarray((128, seq), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=s_ps, stationary=q_sb, moving=k_sb)
    s = nl.ndarray((128, seq), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=s, src=s_ps)
    # key index (free) <= query index (i*128 + partition)
    nisa.affine_select(dst=s, pattern=[[-1, seq]], channel_multiplier=1, on_true_tile=s,
                       on_false_value=-30000.0, cmp_op=nl.greater_equal, offset=i * 128)
    negmax = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=negmax, op=nl.max, data=s, axis=1, negate=True)
    nisa.tensor_scalar(dst=negmax, data=negmax, op0=nl.multiply, operand0=scale)
    p = nl.ndarray((128, seq), dtype=nl.bfloat16, buffer=nl.sbuf)
    rowsum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=p, op=nl.exp, data=s, scale=scale, bias=negmax, reduce_op=nl.add,
                    reduce_res=rowsum)
    o_ps = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.psum)
    for j in nl.affine_range(seq // 128):
      pT_ps = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.psum)
      nisa.nc_transpose(dst=pT_ps, data=p[:, j * 128:(j + 1) * 128], engine=nisa.engine.tensor)
      pT = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
      nisa.tensor_copy(dst=pT, src=pT_ps)
      nisa.nc_matmul(dst=o_ps, stationary=pT, moving=v_tiles[j])
    o = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=o, data=o_ps, op0=nl.divide, operand0=rowsum)
    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=o)
  return out
