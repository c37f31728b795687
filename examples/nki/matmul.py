"""The matrix-multiplication tutorial's first four stages, ported: one
64x128x512 matmul; tiled; loads hoisted out of the inner loop; blocked free
dimensions.  result[M, N] = lhsT.T @ rhs, accumulating over K in PSUM
(nc_matmul accumulate=None: the first write overwrites)."""
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def nki_matmul_basic_(lhsT, rhs):
  K, M = lhsT.shape
  K_, N = rhs.shape
  assert K == K_ == 128 and M == 64 and N == 512
  result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
  lhs_tile = nl.ndarray(lhsT.shape, dtype=lhsT.dtype, buffer=nl.sbuf)
  rhs_tile = nl.ndarray(rhs.shape, dtype=rhs.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=lhs_tile, src=lhsT)
  nisa.dma_copy(dst=rhs_tile, src=rhs)
  result_psum = nl.ndarray(result.shape, dtype=nl.float32, buffer=nl.psum)
  nisa.nc_matmul(result_psum, lhs_tile, rhs_tile)
  result_sbuf = nl.ndarray(result_psum.shape, dtype=result.dtype, buffer=nl.sbuf)
  nisa.tensor_copy(dst=result_sbuf, src=result_psum)
  nisa.dma_copy(dst=result, src=result_sbuf)
  return result


@nki.jit
def nki_matmul_tiled_(lhsT, rhs):
  K, M = lhsT.shape
  K_, N = rhs.shape
  assert K == K_
  TILE_M = nl.tile_size.gemm_stationary_fmax
  TILE_K = nl.tile_size.pmax
  TILE_N = nl.tile_size.gemm_moving_fmax
  assert M % TILE_M == 0 and N % TILE_N == 0 and K % TILE_K == 0
  result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
  for m in nl.affine_range(M // TILE_M):
    for n in nl.affine_range(N // TILE_N):
      res_psum = nl.ndarray((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // TILE_K):
        lhsT_tile = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        rhs_tile = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=lhsT_tile,
                      src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
        nisa.dma_copy(dst=rhs_tile,
                      src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
        nisa.nc_matmul(dst=res_psum, stationary=lhsT_tile, moving=rhs_tile)
      res_sb = nl.ndarray(res_psum.shape, dtype=result.dtype, buffer=nl.sbuf)
      nisa.tensor_copy(dst=res_sb, src=res_psum)
      nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N],
                    src=res_sb)
  return result


@nki.jit
def nki_matmul_hoist_load_(lhsT, rhs):
  K, M = lhsT.shape
  K_, N = rhs.shape
  assert K == K_
  TILE_M, TILE_K, TILE_N = 128, 128, 512
  assert M % TILE_M == 0 and N % TILE_N == 0 and K % TILE_K == 0
  result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
  for m in nl.affine_range(M // TILE_M):
    lhsT_tiles = []
    for k in nl.affine_range(K // TILE_K):
      lhsT_tile = nl.ndarray(shape=(TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=lhsT_tile,
                    src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
      lhsT_tiles.append(lhsT_tile)
    for n in nl.affine_range(N // TILE_N):
      rhs_tiles = []
      for k in nl.affine_range(K // TILE_K):
        rhs_tile = nl.ndarray(shape=(TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=rhs_tile,
                      src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
        rhs_tiles.append(rhs_tile)
      res_psum = nl.ndarray(shape=(TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // TILE_K):
        nisa.nc_matmul(dst=res_psum, stationary=lhsT_tiles[k], moving=rhs_tiles[k])
      res_sb = nl.ndarray(shape=(TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
      nisa.tensor_copy(dst=res_sb, src=res_psum)
      nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N],
                    src=res_sb)
  return result


@nki.jit
def nki_matmul_block_free_dimension_(lhsT, rhs):
  K, M = lhsT.shape
  K_, N = rhs.shape
  assert K == K_
  TILE_M, TILE_K, TILE_N = 128, 128, 512
  TILES_IN_BLOCK_M = 2
  TILES_IN_BLOCK_N = 2
  BLOCK_M = TILE_M * TILES_IN_BLOCK_M
  BLOCK_N = TILE_N * TILES_IN_BLOCK_N
  assert M % BLOCK_M == 0 and N % BLOCK_N == 0
  result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
  for m in nl.affine_range(M // BLOCK_M):
    lhsT_tiles = []
    for bm in nl.affine_range(TILES_IN_BLOCK_M):
      row = []
      for k in nl.affine_range(K // TILE_K):
        t = nl.ndarray(shape=(TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        mm = m * TILES_IN_BLOCK_M + bm
        nisa.dma_copy(dst=t, src=lhsT[k * TILE_K:(k + 1) * TILE_K,
                                      mm * TILE_M:(mm + 1) * TILE_M])
        row.append(t)
      lhsT_tiles.append(row)
    for n in nl.affine_range(N // BLOCK_N):
      rhs_tiles = []
      for bn in nl.affine_range(TILES_IN_BLOCK_N):
        row = []
        for k in nl.affine_range(K // TILE_K):
          t = nl.ndarray(shape=(TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
          nn = n * TILES_IN_BLOCK_N + bn
          nisa.dma_copy(dst=t, src=rhs[k * TILE_K:(k + 1) * TILE_K,
                                       nn * TILE_N:(nn + 1) * TILE_N])
          row.append(t)
        rhs_tiles.append(row)
      for bm in nl.affine_range(TILES_IN_BLOCK_M):
        for bn in nl.affine_range(TILES_IN_BLOCK_N):
          result_tile = nl.ndarray(shape=(TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
          for k in nl.affine_range(K // TILE_K):
            nisa.nc_matmul(dst=result_tile, stationary=lhsT_tiles[bm][k],
                           moving=rhs_tiles[bn][k])
          result_tmp = nl.ndarray(shape=result_tile.shape, dtype=result.dtype, buffer=nl.sbuf)
          nisa.tensor_copy(dst=result_tmp, src=result_tile)
          mm, nn = m * TILES_IN_BLOCK_M + bm, n * TILES_IN_BLOCK_N + bn
          nisa.dma_copy(dst=result[mm * TILE_M:(mm + 1) * TILE_M, nn * TILE_N:(nn + 1) * TILE_N],
                        src=result_tmp)
  return result
