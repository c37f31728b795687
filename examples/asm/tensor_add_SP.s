# tensor_add_SP.s - the SP stream that feeds tensor_add.s (DVE): load a and
# b from HBM into SBUF, wait for DVE, store c.  Run both in the simulator:
#   /usr/bin/python3 examples/asm/run.py tensor_add
#
# HBM (examples/asm/tensor_add.tensor-map.json): a [128][512] fp32 at 0x0,
# b at 0x40000, c at 0x80000; rows are 2 KiB.  SBUF: a at 0x0, b at 0x800,
# c at 0x1000 of every partition.  A DMA address of SBUF is
# partition * 0x40000 + offset, hence the partition step 262144.
# src_reg/dst_reg 255 = no register offset.

        # a and b: each trigger bumps S1 when its transfer completes
        PseudoDmaDirect2d dst=sbuf[0]@0x0:fp32<4x512,262144x128> src=hbm@0x0:fp32<4x512,2048x128> queue=0 transpose=0 dge=none compute=bypass qos=0 src_reg=255 dst_reg=255
        DmaTrigger queue=0 ndesc=1 upd=S1.sem_inc@complete
        PseudoDmaDirect2d dst=sbuf[0]@0x800:fp32<4x512,262144x128> src=hbm@0x40000:fp32<4x512,2048x128> queue=1 transpose=0 dge=none compute=bypass qos=0 src_reg=255 dst_reg=255
        DmaTrigger queue=1 ndesc=1 upd=S1.sem_inc@complete

        # c, once DVE signalled S2
        PseudoDmaDirect2d dst=hbm@0x80000:fp32<4x512,2048x128> src=sbuf[0]@0x1000:fp32<4x512,262144x128> queue=2 transpose=0 dge=none compute=bypass qos=0 src_reg=255 dst_reg=255 wait=S2>=1
        DmaTrigger queue=2 ndesc=1 upd=S3.sem_inc@complete
        Halt wait=S3>=1                 ; finish only after the store landed
