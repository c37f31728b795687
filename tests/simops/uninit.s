# --check-uninit: in1 (b at 0x20) is read but never written.
        Memset mode=const value=0x3f800000 out=sbuf[0:4]@0x0:fp32<1x8>
        TensorTensor op=add in0=sbuf[0:4]@0x0:fp32<1x8> in1=sbuf[0:4]@0x20:fp32<1x8> out=sbuf[0:4]@0x40:fp32<1x8>
        Halt
