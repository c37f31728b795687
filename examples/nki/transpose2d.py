"""transpose2d, ported from the NKI tutorial: every partition row of the
input holds a flattened [sz_f1, sz_f2] matrix; the kernel transposes it
with one tensor_copy per element."""
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def tensor_transpose2D_kernel_(in_tensor, shape2D):
  out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
  sz_p, _ = in_tensor.shape
  in_tile = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=in_tile, src=in_tensor)
  sz_f1, sz_f2 = shape2D
  out_tile = nl.ndarray(shape=(sz_p, sz_f2 * sz_f1), dtype=in_tensor.dtype, buffer=nl.sbuf)
  for i_f1 in nl.affine_range(sz_f1):
    for i_f2 in nl.affine_range(sz_f2):
      nisa.tensor_copy(dst=out_tile[:, nl.ds(i_f2 * sz_f1 + i_f1, 1)],
                       src=in_tile[:, nl.ds(i_f1 * sz_f2 + i_f2, 1)])
  nisa.dma_copy(dst=out_tensor, src=out_tile)
  return out_tensor
