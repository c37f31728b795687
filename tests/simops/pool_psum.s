# GpSimd (Pool) has no PSUM port.
        Iota offset=0 cm=1 step0=0 step1=0 step2=0 step3=0 out=psum[0:16]@0x0:int32<1x4>
        Halt
