/* tests/programs/ort_capi.c: an unmodified C program on ONNX Runtime's C API.
 * Loads a model (argv[1]), optionally sets intra_op_num_threads (argv[2], 0 =
 * leave ORT's default), runs one inference on a fixed input and prints one
 * JSON line: the sum of the output, and the process's thread count before
 * and after the session was created.
 *
 * The PyPI wheel ships libonnxruntime.so but no headers. The C API is a
 * table of function pointers that never reorders (OrtApi, append-only); the
 * entries used here are declared by index, counted in onnxruntime_c_api.h of
 * API versions 1 and 13. Built by tests/integration/test_ort.py against the
 * wheel's library. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void* Status;
typedef struct {
  const void* const* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)(void);
} ApiBase;
const ApiBase* OrtGetApiBase(void);

enum {
  GetErrorMessage = 2,
  CreateEnv = 3,
  CreateSession = 7,
  Run = 9,
  CreateSessionOptions = 10,
  SetIntraOpNumThreads = 24,
  CreateTensorWithDataAsOrtValue = 49,
  GetTensorMutableData = 51,
  CreateCpuMemoryInfo = 69,
  ReleaseEnv = 92,
  ReleaseStatus = 93,
  ReleaseMemoryInfo = 94,
  ReleaseSession = 95,
  ReleaseValue = 96,
  ReleaseSessionOptions = 100,
};

static const void* const* api;
#define CALL(type, index) ((type)api[index])

static void check(Status s, const char* what) {
  if (!s) return;
  fprintf(stderr, "%s: %s\n", what, CALL(const char* (*)(Status), GetErrorMessage)(s));
  exit(1);
}

static int tasks(void) {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  struct dirent* e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') ++n;
  if (d) closedir(d);
  return n;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int intra = argc > 2 ? atoi(argv[2]) : 0;
  api = OrtGetApiBase()->GetApi(13);
  if (!api) return 3;
  void *env, *opts, *sess, *mem, *in, *out = NULL;
  check(CALL(Status(*)(int, const char*, void**), CreateEnv)(3, "ort_capi", &env), "env");
  check(CALL(Status(*)(void**), CreateSessionOptions)(&opts), "options");
  if (intra > 0) check(CALL(Status(*)(void*, int), SetIntraOpNumThreads)(opts, intra), "intra");
  const int threads_before = tasks();
  Status s =
      CALL(Status(*)(void*, const char*, void*, void**), CreateSession)(env, argv[1], opts, &sess);
  check(s, "session");
  const int threads = tasks();
  check(CALL(Status(*)(int, int, void**), CreateCpuMemoryInfo)(1, 0, &mem), "meminfo");
  static float x[1 * 3 * 224 * 224];
  for (size_t i = 0; i < sizeof x / sizeof x[0]; ++i)
    x[i] = (float)((i * 7919u) % 1000u) / 500.0f - 1.0f;
  int64_t shape[4] = {1, 3, 224, 224};
  check(CALL(Status(*)(void*, void*, size_t, const int64_t*, size_t, int, void**),
             CreateTensorWithDataAsOrtValue)(mem, x, sizeof x, shape, 4, 1, &in),
        "tensor");
  const char* in_names[] = {"input"};
  const char* out_names[] = {"logits"};
  check(CALL(Status(*)(void*, const void*, const char* const*, const void* const*, size_t,
                       const char* const*, size_t, void**),
             Run)(sess, NULL, in_names, (const void* const*)&in, 1, out_names, 1, &out),
        "run");
  float* y;
  check(CALL(Status(*)(void*, void**), GetTensorMutableData)(out, (void**)&y), "output");
  double sum = 0;
  for (int i = 0; i < 1000; ++i) sum += y[i];
  printf("{\"sum\": %.9g, \"threads_before\": %d, \"threads\": %d, \"version\": \"%s\"}\n", sum,
         threads_before, threads, OrtGetApiBase()->GetVersionString());
  CALL(void (*)(void*), ReleaseValue)(out);
  CALL(void (*)(void*), ReleaseValue)(in);
  CALL(void (*)(void*), ReleaseMemoryInfo)(mem);
  CALL(void (*)(void*), ReleaseSession)(sess);
  CALL(void (*)(void*), ReleaseSessionOptions)(opts);
  CALL(void (*)(void*), ReleaseEnv)(env);
  return 0;
}
