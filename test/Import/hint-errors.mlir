// Each misuse of the hint API is one located error naming the value.
// REQUIRES: torch
// RUN: not %spyre-import %S/Inputs/hint_errors.py:undeclared 2>&1 | %filecheck %s --check-prefix=UNDECLARED
// RUN: not %spyre-import %S/Inputs/hint_errors.py:size_mismatch 2>&1 | %filecheck %s --check-prefix=SIZE
// RUN: not %spyre-import %S/Inputs/hint_errors.py:zero_tiles 2>&1 | %filecheck %s --check-prefix=ZERO
// RUN: not %spyre-import %S/Inputs/hint_errors.py:fractional_tiles 2>&1 | %filecheck %s --check-prefix=FRACTION
// RUN: not %spyre-import %S/Inputs/hint_errors.py:unknown_keyword 2>&1 | %filecheck %s --check-prefix=KEYWORD
// RUN: not %spyre-import %S/Inputs/hint_errors.py:undeclared_hint 2>&1 | %filecheck %s --check-prefix=HINTNAME

// UNDECLARED: hint_errors.py:15: error: name_tensor_dims: undeclared dimension name 'Q'; call declare_tensor_dim('Q', size) first
// SIZE: hint_errors.py:21: error: name_tensor_dims: size mismatch: dim 0 of shape [4, 64] has extent 4, but the names ['B', 'A'] give B=64 = 64
// ZERO: hint_errors.py:27: error: spyre_hint: tiles count for 'A' must be a positive integer, got 0
// FRACTION: hint_errors.py:27: error: spyre_hint: tiles count for 'A' must be a positive integer, got 1.5
// KEYWORD: hint_errors.py:27: error: spyre_hint: unknown keyword 'tile'; expected one of tiles, slices, num_tiles_per_dim, work_div
// HINTNAME: hint_errors.py:27: error: spyre_hint: undeclared dimension name 'Z'; call declare_tensor_dim('Z', size) first
