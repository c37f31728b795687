# matmul_SP.s - the SP (sync engine) stream of a 128x128 by 128x512 matmul.
# Together with matmul_PE.s it forms one core; assemble, simulate and check
# against NumPy with
#   /usr/bin/python3 examples/asm/run.py matmul
# or by hand:
#   mkdir -p out/mm/nc0/sg0 && cp examples/asm/matmul.tensor-map.json out/mm/tensor-map.json
#   tpb as examples/asm/matmul_SP.s -o out/mm/nc0/sg0/SP.bin
#   tpb as examples/asm/matmul_PE.s -o out/mm/nc0/sg0/PE.bin
#   tpb dis out/mm
#
# HBM: w [128][128] bf16 at 0x0 (256 B rows), x [128][512] bf16 at 0x8000
# (1 KiB rows), y [128][512] fp32 at 0x28000 (2 KiB rows).
# Semaphores: S5 counts finished loads (PE waits for 2), S6 is bumped by PE
# when the product is in PSUM, S7 when y is stored.
# SBUF/PSUM DMA addresses are partition * 0x40000 + offset, so the partition
# step of a DAP is 262144 bytes.  src_reg/dst_reg 255 = no register offset.

        # w -> sbuf[0..127] @0x0, one 256-byte row per partition
        PseudoDmaDirect2d dst=sbuf[0]@0x0:bf16<2x128,262144x128> src=hbm@0x0:bf16<2x128,256x128> queue=0 transpose=0 dge=none compute=bypass qos=0 src_reg=255 dst_reg=255
        DmaTrigger queue=0 ndesc=1 upd=S5.sem_inc@complete

        # x -> sbuf[0..127] @0x100
        PseudoDmaDirect2d dst=sbuf[0]@0x100:bf16<2x512,262144x128> src=hbm@0x8000:bf16<2x512,1024x128> queue=1 transpose=0 dge=none compute=bypass qos=0 src_reg=255 dst_reg=255
        DmaTrigger queue=1 ndesc=1 upd=S5.sem_inc@complete

        # y <- psum once PE is done
        PseudoDmaDirect2d dst=hbm@0x28000:fp32<4x512,2048x128> src=psum[0]@0x0:fp32<4x512,262144x128> queue=2 transpose=0 dge=none compute=bypass qos=0 src_reg=255 dst_reg=255 wait=S6>=1
        DmaTrigger queue=2 ndesc=1 upd=S7.sem_inc@complete
        Halt
