// `emmy run` says on stderr which level it is checking, with the seconds since it started,
// and prints the results table and the tolerance rule it applied on stdout.

// RUN: emmy run -c "nn.Embedding(10, 8)(torch.full((64,), 3))" 2> %t.err | filecheck %s
// RUN: filecheck %s --check-prefix=PROGRESS < %t.err

// CHECK:      level      max abs error   max rel error  result
// CHECK-NEXT: torch          0.000e+00       0.000e+00  pass
// CHECK-NEXT: prim     {{.*}}  pass
// CHECK-NEXT: fused    {{.*}}  pass
// CHECK-NEXT: loop     {{.*}}  pass
// CHECK-NEXT: tile     {{.*}}  pass
// CHECK-NEXT: kernel   {{.*}}  pass
// CHECK-NEXT: an element passes within atol + rtol * |eager| (float32 rtol 0.0001, atol 1e-05); rel error is
// CHECK-NEXT: |error| / (|eager| + atol), so an element near 0 may pass with a rel error above rtol

// PROGRESS:      {{^ *[0-9]+\.[0-9] s}}  checking torch
// PROGRESS-NEXT: {{^ *[0-9]+\.[0-9] s}}  checking prim
// PROGRESS-NEXT: {{^ *[0-9]+\.[0-9] s}}  checking fused
// PROGRESS-NEXT: {{^ *[0-9]+\.[0-9] s}}  checking loop
// PROGRESS-NEXT: {{^ *[0-9]+\.[0-9] s}}  checking tile
// PROGRESS-NEXT: {{^ *[0-9]+\.[0-9] s}}  checking kernel
