# Lines the assembler must reject.  Each bad line is followed by
#   # error: <column>: <text the message must contain>
# (the line number is the bad line's own).  Checked by test_isa_golden.

Frobnicate in=sbuf[0:1]@0x0:fp32
# error: 1: unknown mnemonic 'Frobnicate'
tensorcopy
# error: 1: did you mean 'TensorCopy'?
TensorTensor op=plus
# error: 17: field 'op': unknown ALU 'plus'
TensorTensor op=add op=max
# error: 21: field 'op' is given twice
TensorTensor colour=red
# error: 14: unknown field 'colour' for TensorTensor
TensorTensor op
# error: 16: expected '=' after field name 'op'
TensorCopy in=sbuf[0:129]@0x0:fp32
# error: 20: operand 'in': partition range [0:129] exceeds the 128 partitions
TensorCopy in=sbuf[100:228]@0x0:fp32
# error: 20: partition range [100:228] exceeds the 128 partitions
TensorCopy in=sbuf[8:8]@0x0:fp32
# error: 20: partition range [8:8] is empty
TensorCopy in=sbuf[0:1]@0x1000000:fp32
# error: 25: field 'in': value 16777216 out of range 0..16777215 (24 bits)
TensorCopy in=sbuf[0:1]@0x0:bf17
# error: 29: field 'in': unknown dtype 'bf17'
TensorCopy in=sram[0:1]@0x0:fp32
# error: 15: field 'in': unknown SPACE 'sram'
TensorCopy in=sbuf[0:1]@0x0:fp32<1x65536>
# error: 36: field 'in': value 65536 out of range 0..65535 (16 bits)
TensorCopy in=sbuf[0:1]@0x0:fp32<32768x1>
# error: 34: field 'in': value 32768 out of range -32768..32767 (16-bit signed)
TensorCopy in=sbuf[0:1]@0x0:fp32<1x2,1x0>
# error: 33: operand 'in': count of dim 1 is 0
TensorCopy in=sbuf[0:1]@0x0:fp32<1x1,1x1,1x1,1x1,1x1>
# error: 50: operand 'in': at most 4 free dims
TensorCopy in=sbuf[0:1]@0x0:fp32<1*4>
# error: 35: operand 'in': expected 'x' between step and count
TensorCopy in=hbm[0:1]@0x0:fp32
# error: 12: operand 'in': compute engines cannot address hbm
TensorCopy in=none[0:1]@0x0:fp32
# error: 12: operand 'in' is absent (space none) but has fields set
Activation func=exp dtype=fp32
# error: 21: unknown field 'dtype' for Activation
Activation func=explode
# error: 17: field 'func': unknown ACTFN 'explode'
Activation scale=fast
# error: 18: field 'scale': expected a float
Activation scale_is_ptr=2
# error: 25: field 'scale_is_ptr': expected 0 or 1, got 2
Matmul row_pos=256
# error: 16: field 'row_pos': value 256 out of range 0..255 (8 bits)
RegSet reg=64 imm=0
# error: 8: field 'reg': register 64 not in 0..63
RegSet reg=1 imm=-2147483649
# error: 18: field 'imm': value -2147483649 out of range -2147483648..2147483647
PseudoDmaDirect2d src_reg=100
# error: 19: field 'src_reg': register 100 not in 0..63 or 255 (none)
PseudoDmaDirect2d dst=sbuf[0]@0x40000:fp32
# error: 31: field 'dst': value 262144 out of range 0..262143 (18 bits)
PseudoDmaDirect2d dst=nc8:hbm@0x0:fp32
# error: 25: field 'dst': value 8 out of range 0..7 (3 bits)
DmaTrigger queue=1 ndesc=65536
# error: 26: field 'ndesc': value 65536 out of range 0..65535 (16 bits)
Iota cm=40000
# error: 9: field 'cm': value 40000 out of range -32768..32767 (16-bit signed)
Nop wait=S256>=1
# error: 11: field 'wait': value 256 out of range 0..255 (8 bits)
Nop wait=3
# error: 10: field 'wait': expected S<semaphore>>=<value>
Nop upd=S1.sem_inc
# error: 19: field 'upd': expected '@read' or '@complete'
Nop upd=S1.sem_inc@later
# error: 20: expected '@read' or '@complete', got '@later'
Nop upd=S1.sem_add_imm(70000)@read
# error: 24: field 'upd': value 70000 out of range 0..65535 (16 bits)
Nop wait=S1>=1 wait_val=2
# error: 16: field 'wait_val' is already set by 'wait'
Jump target=nowhere
# error: 13: field 'target': undefined label 'nowhere'
Jump target=-1
# error: 13: field 'target': value -1 out of range 0..4294967295 (32 bits)
Nop extra
# error: 10: expected '=' after field name 'extra'
TensorCopy in=sbuf[0:1]@0x0:fp32,
# error: 33: unexpected ',' after the value
.bundle 0011
# error: 9: .bundle: expected 128 hex digits (64 bytes), got 4
.bundle a1100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000zz
# error: 137: .bundle: 'z' is not a hex digit
dup: Nop
dup: Halt
# error: 1: label 'dup' is already defined
ApExt o0_step2=1 o0_count2=2
Halt
# error: 1: ApExt (line 94) is not used: no operand of Halt has more than 2 free dims
PredExt cmp=ge
TensorScalar
# error: 1: PredExt (line 97) must be followed by TensorScalarPtr, not TensorScalar
ApExt o0_step2=1 o0_count2=3
# error: 1: ApExt does not match the outer dims of the TensorCopy on line 102 (expected: ApExt o0_step2=1 o0_count2=2
TensorCopy in=sbuf[0:1]@0x0:fp32<1x1,1x1,1x2> out=sbuf[0:1]@0x0:fp32<1x2>
ApExt
ApExt
# error: 1: two ApExt prefixes in a row
