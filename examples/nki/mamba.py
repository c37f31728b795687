"""Mamba selective scan, the fused-mamba tutorial's three versions, ported:
for each batch, 128-channel tile and state, exp(delta * A) and delta * u * B
feed a tensor_tensor_scan along the sequence, times C, summed over the
states.  v2 loads delta and u once per channel tile; v3 also splits the
sequence into 512-wide tiles, carrying the scan state between them."""
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def mamba_v1(delta, u, A, B, C):
  batch_size, channels, seq_len = delta.shape
  output = nl.ndarray((batch_size, channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
  _, state_size = A.shape
  assert channels % 128 == 0
  channel_psize = nl.tile_size.pmax
  for i_batch in nl.affine_range(batch_size):
    for i_channel_tile in nl.affine_range(channels // channel_psize):
      channel_start = i_channel_tile * channel_psize
      scanC_accum = nl.zeros((channel_psize, seq_len), dtype=delta.dtype)
      for i_state in nl.affine_range(state_size):
        delta_slice = delta[i_batch, channel_start:channel_start + channel_psize, 0:seq_len]
        delta_i = nl.ndarray(delta_slice.shape, dtype=delta_slice.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=delta_i, src=delta_slice)
        A_slice = A[channel_start:channel_start + channel_psize, i_state:i_state + 1]
        A_i = nl.ndarray(A_slice.shape, dtype=A_slice.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=A_i, src=A_slice)
        deltaA = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.activation(dst=deltaA, op=nl.exp, data=delta_i, scale=A_i)
        u_slice = u[i_batch, channel_start:channel_start + channel_psize, 0:seq_len]
        u_i = nl.ndarray(u_slice.shape, dtype=u_slice.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=u_i, src=u_slice)
        B_slice = B[i_batch, i_state:i_state + 1, 0:seq_len]
        B_i = nl.ndarray(B_slice.shape, dtype=B_slice.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=B_i, src=B_slice)
        deltaU = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=deltaU, data1=delta_i, data2=u_i, op=nl.multiply)
        B_i_bcast = nl.broadcast_to(B_i, (channel_psize, seq_len))
        deltaBu = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=deltaBu, data1=deltaU, data2=B_i_bcast, op=nl.multiply)
        scan_res = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor_scan(dst=scan_res, data0=deltaA, data1=deltaBu, initial=0.0,
                                op0=nl.multiply, op1=nl.add)
        C_slice = C[i_batch, i_state:i_state + 1, 0:seq_len]
        C_i = nl.ndarray(C_slice.shape, dtype=C_slice.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=C_i, src=C_slice)
        C_i_bcast = nl.broadcast_to(C_i, (channel_psize, seq_len))
        scanC = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=scanC, data1=scan_res, data2=C_i_bcast, op=nl.multiply)
        nisa.tensor_tensor(dst=scanC_accum, data1=scanC_accum, data2=scanC, op=nl.add)
      nisa.dma_copy(dst=output[i_batch, channel_start:channel_start + channel_psize, 0:seq_len],
                    src=scanC_accum)
  return output


@nki.jit
def mamba_v2(delta, u, A, B, C):
  batch_size, channels, seq_len = delta.shape
  output = nl.ndarray((batch_size, channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
  _, state_size = A.shape
  assert channels % 128 == 0
  channel_psize = nl.tile_size.pmax
  for i_batch in nl.affine_range(batch_size):
    for i_channel_tile in nl.affine_range(channels // channel_psize):
      channel_start = i_channel_tile * channel_psize
      scanC_accum = nl.zeros((channel_psize, seq_len), dtype=delta.dtype)
      delta_slice = delta[i_batch, channel_start:channel_start + channel_psize, 0:seq_len]
      delta_i = nl.ndarray(delta_slice.shape, dtype=delta_slice.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=delta_i, src=delta_slice)
      u_slice = u[i_batch, channel_start:channel_start + channel_psize, 0:seq_len]
      u_i = nl.ndarray(u_slice.shape, dtype=u_slice.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=u_i, src=u_slice)
      for i_state in nl.affine_range(state_size):
        A_slice = A[channel_start:channel_start + channel_psize, i_state:i_state + 1]
        A_i = nl.ndarray(A_slice.shape, dtype=A_slice.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=A_i, src=A_slice)
        deltaA = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.activation(dst=deltaA, op=nl.exp, data=delta_i, scale=A_i)
        B_slice = B[i_batch, i_state:i_state + 1, 0:seq_len]
        B_i = nl.ndarray(B_slice.shape, dtype=B_slice.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=B_i, src=B_slice)
        deltaU = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=deltaU, data1=delta_i, data2=u_i, op=nl.multiply)
        B_i_bcast = nl.broadcast_to(B_i, (channel_psize, seq_len))
        deltaBu = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=deltaBu, data1=deltaU, data2=B_i_bcast, op=nl.multiply)
        scan_res = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor_scan(dst=scan_res, data0=deltaA, data1=deltaBu, initial=0.0,
                                op0=nl.multiply, op1=nl.add)
        C_slice = C[i_batch, i_state:i_state + 1, 0:seq_len]
        C_i = nl.ndarray(C_slice.shape, dtype=C_slice.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=C_i, src=C_slice)
        C_i_bcast = nl.broadcast_to(C_i, (channel_psize, seq_len))
        scanC = nl.ndarray((channel_psize, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=scanC, data1=scan_res, data2=C_i_bcast, op=nl.multiply)
        nisa.tensor_tensor(dst=scanC_accum, data1=scanC_accum, data2=scanC, op=nl.add)
      nisa.dma_copy(dst=output[i_batch, channel_start:channel_start + channel_psize, 0:seq_len],
                    src=scanC_accum)
  return output


@nki.jit
def mamba_v3(delta, u, A, B, C):
  batch_size, channels, seq_len = delta.shape
  output = nl.ndarray((batch_size, channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
  _, state_size = A.shape
  channel_psize = nl.tile_size.pmax
  seq_len_fsize = 512
  n_seq_len_tile = seq_len // seq_len_fsize
  assert channels % channel_psize == 0 and seq_len % seq_len_fsize == 0
  for i_batch in nl.affine_range(batch_size):
    for i_channel_tile in nl.affine_range(channels // channel_psize):
      channel_start = i_channel_tile * channel_psize
      scanC_accum = nl.zeros((channel_psize, seq_len), dtype=delta.dtype)
      delta_slice = delta[i_batch, channel_start:channel_start + channel_psize, 0:seq_len]
      delta_i = nl.ndarray(delta_slice.shape, dtype=delta_slice.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=delta_i, src=delta_slice)
      u_slice = u[i_batch, channel_start:channel_start + channel_psize, 0:seq_len]
      u_i = nl.ndarray(u_slice.shape, dtype=u_slice.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=u_i, src=u_slice)
      for i_state in nl.affine_range(state_size):
        A_slice = A[channel_start:channel_start + channel_psize, i_state:i_state + 1]
        A_i = nl.ndarray(A_slice.shape, dtype=A_slice.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=A_i, src=A_slice)
        scan_init = nl.zeros((channel_psize, 1), dtype=delta_i.dtype)
        for i_seq_len_tile in nl.static_range(n_seq_len_tile):
          s0 = i_seq_len_tile * seq_len_fsize
          s1 = s0 + seq_len_fsize
          deltaA = nl.ndarray((channel_psize, seq_len_fsize), dtype=delta.dtype, buffer=nl.sbuf)
          nisa.activation(dst=deltaA, op=nl.exp, data=delta_i[0:channel_psize, s0:s1], scale=A_i)
          B_slice = B[i_batch, i_state:i_state + 1, s0:s1]
          B_i = nl.ndarray(B_slice.shape, dtype=B_slice.dtype, buffer=nl.sbuf)
          nisa.dma_copy(dst=B_i, src=B_slice)
          deltaU = nl.ndarray((channel_psize, seq_len_fsize), dtype=delta.dtype, buffer=nl.sbuf)
          nisa.tensor_tensor(dst=deltaU, data1=delta_i[0:channel_psize, s0:s1],
                             data2=u_i[0:channel_psize, s0:s1], op=nl.multiply)
          B_i_bcast = nl.broadcast_to(B_i, (channel_psize, seq_len_fsize))
          deltaBu = nl.ndarray((channel_psize, seq_len_fsize), dtype=delta.dtype, buffer=nl.sbuf)
          nisa.tensor_tensor(dst=deltaBu, data1=deltaU, data2=B_i_bcast, op=nl.multiply)
          scan_res = nl.ndarray((channel_psize, seq_len_fsize), dtype=delta.dtype, buffer=nl.sbuf)
          nisa.tensor_tensor_scan(dst=scan_res, data0=deltaA, data1=deltaBu, initial=scan_init,
                                  op0=nl.multiply, op1=nl.add)
          nisa.tensor_copy(dst=scan_init,
                           src=scan_res[0:channel_psize, seq_len_fsize - 1:seq_len_fsize])
          C_slice = C[i_batch, i_state:i_state + 1, s0:s1]
          C_i = nl.ndarray(C_slice.shape, dtype=C_slice.dtype, buffer=nl.sbuf)
          nisa.dma_copy(dst=C_i, src=C_slice)
          C_i_bcast = nl.broadcast_to(C_i, (channel_psize, seq_len_fsize))
          scanC = nl.ndarray((channel_psize, seq_len_fsize), dtype=delta.dtype, buffer=nl.sbuf)
          nisa.tensor_tensor(dst=scanC, data1=scan_res, data2=C_i_bcast, op=nl.multiply)
          nisa.tensor_tensor(dst=scanC_accum[0:channel_psize, s0:s1],
                             data1=scanC_accum[0:channel_psize, s0:s1], data2=scanC, op=nl.add)
      nisa.dma_copy(dst=output[i_batch, channel_start:channel_start + channel_psize, 0:seq_len],
                    src=scanC_accum[0:channel_psize, 0:seq_len])
  return output
