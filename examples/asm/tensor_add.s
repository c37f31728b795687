# tensor_add.s - c = a + b on the DVE stream, for one 128 x 512 fp32 tile.
#
# a, b and c live in SBUF (one row per partition, 2 KiB each):
#   a at byte 0x0000 of every partition, b at 0x0800, c at 0x1000.
# The DMA engine (on SP) loaded a and b and bumps semaphore S1 twice when
# both loads completed; we wait for that, add, and tell SP through S2 that c
# is ready to be stored.

        Memset mode=const value=0x0 out=sbuf[0:128]@0x1000:fp32<1x512>

        # c = a + b, once S1 reached 2 (both inputs are in SBUF)
        TensorTensor op=add in0=sbuf[0:128]@0x0:fp32<1x512> in1=sbuf[0:128]@0x800:fp32<1x512> out=sbuf[0:128]@0x1000:fp32<1x512> wait=S1>=2 upd=S2.sem_inc@complete

        # a 4-D view of the same data (4 x 2 x 8 x 8 elements): the assembler
        # emits the ApExt prefix that carries free dims 2 and 3
        TensorCopy in=sbuf[0:128]@0x1000:fp32<1x8,8x8,64x2,128x4> out=sbuf[0:128]@0x1800:fp32<1x8,8x8,64x2,128x4>

        Halt
