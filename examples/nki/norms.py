"""rmsnorm, layernorm and softmax over the rows of a [N, D] tensor in
128-row tiles (the partial last tile is sliced, NumPy style).  Written for
tpbsim in NKI beta-2 style after the public tutorials' structure."""
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def nki_rmsnorm_kernel(a_tensor, g_tensor, eps=1e-6):
  """out = a / sqrt(mean(a**2, axis=1) + eps) * g, g of shape [1, D]."""
  out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
  N, D = a_tensor.shape
  g_row = nl.ndarray((1, D), dtype=g_tensor.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=g_row, src=g_tensor)
  g_tile = nl.broadcast_to(g_row, (128, D))
  for i in nl.affine_range((N + 127) // 128):
    rows = min(128, N - i * 128)
    a_tile = nl.ndarray((128, D), dtype=a_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_tile[0:rows], src=a_tensor[i * 128:i * 128 + rows])
    sq = nl.ndarray((128, D), dtype=nl.float32, buffer=nl.sbuf)
    ssum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq[0:rows], op=nl.square, data=a_tile[0:rows], reduce_op=nl.add,
                    reduce_res=ssum[0:rows])
    rstd = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=rstd[0:rows], data=ssum[0:rows], op0=nl.multiply, operand0=1.0 / D,
                       op1=nl.add, operand1=eps)
    nisa.activation(dst=rstd[0:rows], op=nl.rsqrt, data=rstd[0:rows])
    out_tile = nl.ndarray((128, D), dtype=a_tensor.dtype, buffer=nl.sbuf)
    nisa.scalar_tensor_tensor(dst=out_tile[0:rows], data=a_tile[0:rows], op0=nl.multiply,
                              operand0=rstd[0:rows], op1=nl.multiply, operand1=g_tile[0:rows])
    nisa.dma_copy(dst=out_tensor[i * 128:i * 128 + rows], src=out_tile[0:rows])
  return out_tensor


@nki.jit
def nki_layernorm_kernel(a_tensor, eps=1e-5):
  """out = (a - mean) / sqrt(var + eps) per row (no affine parameters)."""
  out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
  N, D = a_tensor.shape
  for i in nl.affine_range((N + 127) // 128):
    rows = min(128, N - i * 128)
    a_tile = nl.ndarray((128, D), dtype=a_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_tile[0:rows], src=a_tensor[i * 128:i * 128 + rows])
    neg_mean = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=neg_mean[0:rows], op=nl.add, data=a_tile[0:rows], axis=1)
    nisa.tensor_scalar(dst=neg_mean[0:rows], data=neg_mean[0:rows], op0=nl.multiply,
                       operand0=-1.0 / D)
    xc = nl.ndarray((128, D), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=xc[0:rows], data=a_tile[0:rows], op0=nl.add,
                       operand0=neg_mean[0:rows])
    sq = nl.ndarray((128, D), dtype=nl.float32, buffer=nl.sbuf)
    var = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq[0:rows], op=nl.square, data=xc[0:rows], reduce_op=nl.add,
                    reduce_res=var[0:rows])
    nisa.tensor_scalar(dst=var[0:rows], data=var[0:rows], op0=nl.multiply, operand0=1.0 / D,
                       op1=nl.add, operand1=eps)
    nisa.activation(dst=var[0:rows], op=nl.rsqrt, data=var[0:rows])
    out_tile = nl.ndarray((128, D), dtype=a_tensor.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=out_tile[0:rows], data=xc[0:rows], op0=nl.multiply,
                       operand0=var[0:rows])
    nisa.dma_copy(dst=out_tensor[i * 128:i * 128 + rows], src=out_tile[0:rows])
  return out_tensor


@nki.jit
def nki_softmax_kernel(x):
  """Row-wise softmax: exp(x - max) / sum."""
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  N, D = x.shape
  for i in nl.affine_range((N + 127) // 128):
    rows = min(128, N - i * 128)
    t = nl.ndarray((128, D), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t[0:rows], src=x[i * 128:i * 128 + rows])
    negmax = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=negmax[0:rows], op=nl.max, data=t[0:rows], axis=[1], negate=True)
    e = nl.ndarray((128, D), dtype=nl.float32, buffer=nl.sbuf)
    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e[0:rows], op=nl.exp, data=t[0:rows], bias=negmax[0:rows],
                    reduce_op=nl.add, reduce_res=s[0:rows])
    nisa.reciprocal(dst=s[0:rows], data=s[0:rows])
    nisa.tensor_scalar(dst=e[0:rows], data=e[0:rows], op0=nl.multiply, operand0=s[0:rows])
    nisa.dma_copy(dst=out[i * 128:i * 128 + rows], src=e[0:rows])
  return out
