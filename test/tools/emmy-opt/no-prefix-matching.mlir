// A prefix of a pass or an option is not an abbreviation of it: `--lower-fused` could one day
// name another pass, so it is an error rather than a silent `--lower-fused-to-loop`.

// RUN: not emmy-opt %s --lower-fused 2>&1 | filecheck %s --check-prefix=PASS
// PASS: emmy-opt: error: unknown pass or option '--lower-fused'; did you mean '--lower-fused-to-loop'?
// PASS-NOT: Traceback

// RUN: not emmy-opt %s --split-input 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION: emmy-opt: error: unknown pass or option '--split-input'; did you mean '--split-input-file'?

// RUN: not emmy-opt %s -p lower-fused 2>&1 | filecheck %s --check-prefix=PIPELINE
// PIPELINE: emmy-opt: error: unknown pass 'lower-fused'; did you mean 'lower-fused-to-loop'?

func.func @f() {
  func.return
}
