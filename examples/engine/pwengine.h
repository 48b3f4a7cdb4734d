/* examples/engine/pwengine.h: the C API of libpwengine.so, a small oneDNN
 * inference engine built like TensorFlow (a session, inter-op and intra-op
 * thread options, an inter-op scheduler, OpenMP inside each operator).
 *
 * Error contract: functions that can fail return NULL or a negative number and,
 * when err is non-NULL, write one line (NUL-terminated, at most errlen bytes).
 * Nothing throws across this API and nothing prints. */
#ifndef PWENGINE_H
#define PWENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PWE_API __attribute__((visibility("default")))

typedef struct pwe_session_options pwe_session_options;
typedef struct pwe_session pwe_session;

/* Options. Thread counts: 0 = the engine's defaults, which are TensorFlow's
 * naive defaults: as many inter-op workers and as many intra-op (OpenMP)
 * threads per operator as the process has logical CPUs. */
PWE_API pwe_session_options* pwe_session_options_new(void);
PWE_API void pwe_session_options_free(pwe_session_options* o);
PWE_API void pwe_session_options_set_inter_op_threads(pwe_session_options* o, int n);
PWE_API void pwe_session_options_set_intra_op_threads(pwe_session_options* o, int n);
PWE_API int pwe_session_options_get_inter_op_threads(const pwe_session_options* o);
PWE_API int pwe_session_options_get_intra_op_threads(const pwe_session_options* o);
/* Batch (dim 0 of every graph input) and spatial size (H = W of every 4-D
 * input); 0 keeps the model's. Seed for weights a stripped model lacks and for
 * the generated inputs (default 1). */
PWE_API void pwe_session_options_set_batch(pwe_session_options* o, int batch);
PWE_API void pwe_session_options_set_image_size(pwe_session_options* o, int hw);
PWE_API int pwe_session_options_get_batch(const pwe_session_options* o);
PWE_API int pwe_session_options_get_image_size(const pwe_session_options* o);
PWE_API void pwe_session_options_set_seed(pwe_session_options* o, uint64_t seed);

/* A session over a model: ONNX ModelProto bytes or the project's JSON graph
 * (graph/README.md, extended in examples/engine/README.md); the format is
 * detected. The options are read here (a framework hook may change them
 * before the call); the inter-op workers start here. */
PWE_API pwe_session* pwe_session_new(const void* model, size_t size, pwe_session_options* opts,
                                     char* err, size_t errlen);
PWE_API void pwe_session_free(pwe_session* s);

/* The thread counts the session runs with (defaults resolved). */
PWE_API int pwe_session_inter_op_threads(const pwe_session* s);
PWE_API int pwe_session_intra_op_threads(const pwe_session* s);

/* The model bytes the session was made from (ONNX or JSON, as given): what a
 * hook or a tool reads to compute the graph's width. Valid until free. */
PWE_API const void* pwe_session_graph(const pwe_session* s, size_t* size);

/* Inputs are generated from the seed at session creation; set_input replaces
 * input i (count floats; integer index inputs are given as floats). */
PWE_API int pwe_session_num_inputs(const pwe_session* s);
PWE_API int pwe_session_set_input(pwe_session* s, int i, const float* data, size_t count);
/* Runs the graph once. 0 on success. */
PWE_API int pwe_session_run(pwe_session* s, char* err, size_t errlen);
PWE_API int pwe_session_num_outputs(const pwe_session* s);
/* Output i after a run: data, element count, rank and dims (dims has room for 8). */
PWE_API int pwe_session_output(const pwe_session* s, int i, const float** data, size_t* count,
                               int* rank, int64_t* dims);

/* Profiling: while on, each run records every operator's time (wall time around it on
 * the worker that ran it; run with one inter-op worker to time each alone). */
PWE_API void pwe_session_set_profiling(pwe_session* s, int on);
PWE_API int pwe_session_num_ops(const pwe_session* s);
/* Operator i, in the session's topological order: its name, ONNX type, the operators
 * whose outputs it reads (indices < i), and its time in the last profiled run (ms).
 * Pointers are valid until free. 0 on success. */
PWE_API int pwe_session_op(const pwe_session* s, int i, const char** name, const char** type,
                           const int** preds, int* npreds, double* ms);

/* "oneDNN 2.6.3 (cpu runtime: omp)" */
PWE_API const char* pwe_version(void);

#ifdef __cplusplus
}
#endif
#endif
