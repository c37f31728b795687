# loop.s - control flow on the Pool stream: labels, a counted loop, a call.
# Branch and call targets are bundle indices; labels compute them.

        RegSet reg=1 imm=4              ; 4 iterations
loop:   Iota out=sbuf[0:128]@0x0:int32<1x64> offset=0 cm=64 step0=1 step1=0 step2=0 step3=0
        Call target=scale
        RegAdd reg=1 imm=-1
        BranchCmp reg=1 cmp=gt imm=0 target=loop
        Halt

# subroutine: x = x * 2 (int32), in place
scale:  TensorScalar op0=multiply op1=bypass in=sbuf[0:128]@0x0:int32<1x64> out=sbuf[0:128]@0x0:int32<1x64> rev0=0 rev1=0 s0_is_ptr=0 s1_is_ptr=0 s0=0x2 s1=0x0
        Return
