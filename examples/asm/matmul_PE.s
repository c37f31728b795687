# matmul_PE.s - the PE stream of the matmul in matmul_SP.s:
#   psum[0:128, 0:512] = w^T . x   (contraction over the 128 partitions)

        # wait for both loads (S5 counts completed DMA transfers)
        LdWeights src=sbuf[0:128]@0x0:bf16<1x128> row_pos=0 col_pos=0 row_size=128 col_size=128 perf=normal onezero=0 wait=S5>=2
        Matmul moving=sbuf[0:128]@0x100:bf16<1x512> dst=psum[0:128]@0x0:fp32<1x512> row_pos=0 col_pos=0 row_size=128 col_size=128 perf=normal accumulate=0 onezero=0 transpose=0 upd=S6.sem_inc@complete
        Halt
