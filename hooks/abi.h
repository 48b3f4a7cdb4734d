// hooks/abi: prototypes of the interposed names that no system header declares
// (the OpenMP runtimes' compiler-facing entry points), as the runtimes define them.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <unistd.h>

#include <functional>

extern "C" {
// OpenMP API (omp.h is not included: libgomp's and libomp's headers differ).
void omp_set_num_threads(int n);
int omp_get_max_threads(void);
int omp_get_num_procs(void);
// Called, not hooked (hooks/call_list.h).
int omp_get_level(void);
void kmp_set_defaults(const char* str);  // libomp's and libiomp5's extension
int kmp_get_affinity_max_proc(void);     // likewise
void kmp_set_blocktime(int msec);        // likewise: the calling thread's teams
// MKL's count for the calling thread's calls (torch's at::set_num_threads sets it).
int MKL_Set_Num_Threads_Local(int n);

// libgomp's ABI (GCC's codegen for #pragma omp parallel); libomp implements it too.
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
void GOMP_parallel_start(void (*fn)(void*), void* data, unsigned num_threads);
unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads,
                                  unsigned flags);
void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned num_threads, unsigned count,
                            unsigned flags);
void GOMP_parallel_loop_static(void (*fn)(void*), void* data, unsigned num_threads, long start,
                               long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_dynamic(void (*fn)(void*), void* data, unsigned num_threads, long start,
                                long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_guided(void (*fn)(void*), void* data, unsigned num_threads, long start,
                               long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_runtime(void (*fn)(void*), void* data, unsigned num_threads, long start,
                                long end, long incr, unsigned flags);
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*fn)(void*), void* data, unsigned num_threads,
                                             long start, long end, long incr, long chunk,
                                             unsigned flags);
void GOMP_parallel_loop_nonmonotonic_guided(void (*fn)(void*), void* data, unsigned num_threads,
                                            long start, long end, long incr, long chunk,
                                            unsigned flags);
void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned num_threads,
                                             long start, long end, long incr, unsigned flags);
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void*), void* data,
                                                   unsigned num_threads, long start, long end,
                                                   long incr, unsigned flags);

// libomp's fork entry points (clang's codegen) are variadic: hooks/kmpc_x86_64.S
// defines them and forwards every register to the original unchanged.
struct ident;
void __kmpc_fork_call(struct ident* loc, int argc, void (*microtask)(int*, int*, ...), ...);
void __kmpc_fork_teams(struct ident* loc, int argc, void (*microtask)(int*, int*, ...), ...);

// examples/engine's C API (examples/engine/pwengine.h): the session constructor that
// hooks/engine.cpp interposes.
typedef struct pwe_session_options pwe_session_options;
typedef struct pwe_session pwe_session;
pwe_session* pwe_session_new(const void* model, size_t size, pwe_session_options* opts, char* err,
                             size_t errlen);
// ... and the option functions it calls in the same library.
int pwe_session_options_get_inter_op_threads(const pwe_session_options* o);
int pwe_session_options_get_intra_op_threads(const pwe_session_options* o);
void pwe_session_options_set_inter_op_threads(pwe_session_options* o, int n);
void pwe_session_options_set_intra_op_threads(pwe_session_options* o, int n);
int pwe_session_options_get_batch(const pwe_session_options* o);
int pwe_session_options_get_image_size(const pwe_session_options* o);

// TensorFlow's C API (tensorflow/c/c_api.h, c_api_experimental.h, eager/c_api.h),
// opaque types only; and the tsl::thread::ThreadPool constructor that
// libtensorflow_cc calls in libtensorflow_framework (hooks/tf.cpp, hooks/README.md).
typedef struct TF_Graph TF_Graph;
typedef struct TF_Session TF_Session;
typedef struct TF_SessionOptions TF_SessionOptions;
typedef struct TF_Status TF_Status;
typedef struct TF_Buffer TF_Buffer;
typedef struct TFE_Context TFE_Context;
typedef struct TFE_ContextOptions TFE_ContextOptions;
// The C API's buffer (tensorflow/c/tf_buffer.h): a stable C layout, read by hooks/tf.cpp.
struct TF_Buffer {
  const void* data;
  size_t length;
  void (*data_deallocator)(void* data, size_t length);
};
// Called, not hooked (hooks/call_list.h).
TF_Buffer* TF_NewBuffer(void);
void TF_DeleteBuffer(TF_Buffer* buffer);
TF_Status* TF_NewStatus(void);
void TF_DeleteStatus(TF_Status* status);
int TF_GetCode(const TF_Status* status);
void TF_GraphToGraphDef(TF_Graph* graph, TF_Buffer* output, TF_Status* status);
TF_SessionOptions* TF_NewSessionOptions(void);
void TF_SetConfig(TF_SessionOptions* options, const void* proto, size_t proto_len,
                  TF_Status* status);
TF_Session* TF_NewSession(TF_Graph* graph, const TF_SessionOptions* opts, TF_Status* status);
TF_Session* TF_LoadSessionFromSavedModel(const TF_SessionOptions* session_options,
                                         const TF_Buffer* run_options, const char* export_dir,
                                         const char* const* tags, int tags_len, TF_Graph* graph,
                                         TF_Buffer* meta_graph_def, TF_Status* status);
TFE_ContextOptions* TFE_NewContextOptions(void);
void TFE_ContextOptionsSetConfig(TFE_ContextOptions* options, const void* proto, size_t proto_len,
                                 TF_Status* status);
TFE_Context* TFE_NewContext(const TFE_ContextOptions* opts, TF_Status* status);
typedef struct TF_Function TF_Function;
void TF_FunctionToFunctionDef(TF_Function* func, TF_Buffer* output, TF_Status* status);
void TFE_ContextAddFunctionDef(TFE_Context* ctx, const char* serialized_function_def, size_t size,
                               TF_Status* status);
void TFE_ContextAddFunction(TFE_Context* ctx, TF_Function* function, TF_Status* status);
typedef struct TF_Operation TF_Operation;
typedef struct TF_FunctionOptions TF_FunctionOptions;
typedef struct TF_Output {
  TF_Operation* oper;
  int index;
} TF_Output;
TF_Function* TF_GraphToFunctionWithControlOutputs(
    const TF_Graph* fn_body, const char* fn_name, unsigned char append_hash_to_fn_name,
    int num_opers, const TF_Operation* const* opers, int ninputs, const TF_Output* inputs,
    int noutputs, const TF_Output* outputs, const char* const* output_names, int ncontrol_outputs,
    const TF_Operation* const* control_outputs, const char* const* control_output_names,
    const TF_FunctionOptions* opts, const char* description, TF_Status* status);
// TF_DataType is a C enum: an int.
int TF_OperationOutputType(TF_Output oper_out);
TF_Buffer* TF_GetHandleShapeAndType(TF_Graph* graph, TF_Output output);
// tsl::thread::ThreadPool::ThreadPool(tsl::Env*, tsl::ThreadOptions const&,
//     std::string const&, int num_threads, bool low_latency_hint, Eigen::Allocator*)
// (complete-object constructor; `name` is a std::string, C++11 ABI).
void _ZN3tsl6thread10ThreadPoolC1EPNS_3EnvERKNS_13ThreadOptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEibPN5Eigen9AllocatorE(
    void* self, void* env, const void* thread_options, const void* name, int num_threads,
    bool low_latency_hint, void* allocator);
// PyTorch's ATen thread controls, exported by libtorch_cpu (hooks/torch.cpp,
// hooks/README.md). C++ functions are declared under their mangled names, like
// every other hook (one scheme, hooks/hook.h unchanged); the demangled
// prototype is above each one.
// void at::set_num_threads(int)
void _ZN2at15set_num_threadsEi(int nthreads);
// void at::set_num_interop_threads(int)
void _ZN2at23set_num_interop_threadsEi(int nthreads);
// void at::init_num_threads()
void _ZN2at16init_num_threadsEv(void);
// void at::launch(std::function<void()>): the inter-op pool's entry point.
void _ZN2at6launchESt8functionIFvvEE(std::function<void()> func);
// The BLAS libraries' own thread-count setters (hooks/blas.cpp): OpenBLAS,
// MKL (mkl_rt: both spellings are separate entry points), BLIS.
void openblas_set_num_threads(int n);
void MKL_Set_Num_Threads(int n);
void mkl_set_num_threads(int n);
void bli_thread_set_num_threads(long n);

// ONNX Runtime's C API entry (onnxruntime_c_api.h), exported by libonnxruntime.so;
// the table it leads to is changed in place by hooks/ort_capi.cpp.
typedef struct OrtApiBase OrtApiBase;
const OrtApiBase* OrtGetApiBase(void);
// Not a hook: parwidth's own entry for its Python startup hook
// (preload/python/sitecustomize.py, hooks/python.cpp), found with ctypes.CDLL(None).
int parwidth_python(const char* op, const char* args, const void* data, size_t size, char* reply,
                    size_t reply_size);
}
