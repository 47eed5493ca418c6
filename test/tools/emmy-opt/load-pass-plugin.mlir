// --load-pass-plugin runs a Python file that registers passes; a plugin that cannot be loaded
// is an error, not a traceback.

// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/missing.py 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: emmy-opt: error: cannot load pass plugin '{{.*}}missing.py': no such file
// MISSING-NOT: Traceback

// RUN: not emmy-opt %s --load-pass-plugin %s 2>&1 | filecheck %s --check-prefix=NOT-PYTHON
// NOT-PYTHON: emmy-opt: error: cannot load pass plugin '{{.*}}load-pass-plugin.mlir': not a Python file

// A plugin that raises is reported with the exception; the plugin's author can ask for the traceback.
// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/broken_plugin.py 2>&1 | filecheck %s --check-prefix=RAISES
// RAISES: emmy-opt: error: cannot load pass plugin '{{.*}}broken_plugin.py': internal error in the plugin: ModuleNotFoundError: No module named 'emmy.passes.no_such_module' (EMMY_DEBUG=1 prints the traceback)
// RAISES-NOT: Traceback

func.func @f(%x: f32) -> f32 {
  func.return %x : f32
}
