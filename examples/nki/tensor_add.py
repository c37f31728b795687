"""Tensor add, ported from the NKI tutorial (tensor_addition): a nested
loop over [128, 512] tiles, and an SPMD version where each program of a
launch grid kernel[g0, g1] adds one tile (nl.program_id)."""
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def nki_tensor_add(a_input, b_input):
  c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
  M, N = a_input.shape
  TILE_M = 128
  TILE_N = 512
  assert a_input.shape == b_input.shape
  assert M % TILE_M == 0 and N % TILE_N == 0

  for m in nl.affine_range(M // TILE_M):
    for n in nl.affine_range(N // TILE_N):
      a_tile = nl.ndarray(shape=(TILE_M, TILE_N), dtype=a_input.dtype, buffer=nl.sbuf)
      b_tile = nl.ndarray(shape=(TILE_M, TILE_N), dtype=b_input.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=a_tile, src=a_input[m * TILE_M:(m + 1) * TILE_M,
                                            n * TILE_N:(n + 1) * TILE_N])
      nisa.dma_copy(dst=b_tile, src=b_input[m * TILE_M:(m + 1) * TILE_M,
                                            n * TILE_N:(n + 1) * TILE_N])
      c_tile = nl.ndarray(shape=(TILE_M, TILE_N), dtype=a_input.dtype, buffer=nl.sbuf)
      nisa.tensor_tensor(dst=c_tile, data1=a_tile, data2=b_tile, op=nl.add)
      nisa.dma_copy(dst=c_output[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N],
                    src=c_tile)
  return c_output


@nki.jit
def nki_tensor_add_spmd(a_input, b_input):
  """Launch as nki_tensor_add_spmd[M // 128, N // 512](a, b)."""
  c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
  m = nl.program_id(0)
  n = nl.program_id(1)
  a_tile = nl.ndarray((128, 512), dtype=a_input.dtype, buffer=nl.sbuf)
  b_tile = nl.ndarray((128, 512), dtype=b_input.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=a_tile, src=a_input[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512])
  nisa.dma_copy(dst=b_tile, src=b_input[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512])
  nisa.tensor_tensor(dst=a_tile, data1=a_tile, data2=b_tile, op=nl.add)
  nisa.dma_copy(dst=c_output[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=a_tile)
  return c_output
