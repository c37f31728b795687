# out runs 16 bytes past the end of a 224 KiB (trn2) SBUF partition.
        Memset mode=const value=0x0 out=sbuf[0:128]@0x37ff0:fp32<1x8>
        Halt
