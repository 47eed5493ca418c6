// `emmy --version` and `emmy-opt --version` read one version, the installed package's.

// RUN: emmy --version > %t
// RUN: emmy-opt --version >> %t
// RUN: filecheck %s < %t
// CHECK:      emmy [[EMMY:[0-9][^ ]*]] (xDSL [[XDSL:[0-9][^,]*]], PyTorch {{[0-9].*}})
// CHECK-NEXT: emmy-opt (emmy [[EMMY]], xDSL [[XDSL]])
