/* tests/programs/adopt_stress.c: graph adoptions from several threads at once,
   for the stress suite under ThreadSanitizer (issue 39): ONNX Runtime sessions
   made through its C API (each hands parwidth its model's graph, which the
   plan in force adopts) and TensorFlow function graphs added to an eager
   context (read and kept for the next run), while the test's neighbours join
   and leave the node registry and this program's own busy threads make the
   monitor change the OpenMP cap.

     adopt_stress ORT_LIB MODEL TF_LIB FDEF THREADS ITERATIONS BUSY [until-eof]

   ORT_LIB / TF_LIB: the wheels' libonnxruntime.so.1.* and libtensorflow_cc.so.2
   ("-" leaves one out), loaded RTLD_GLOBAL so that the calls below reach the
   preloaded hooks as a linked program's would. MODEL: an ONNX model with
   weights; FDEF: a serialized FunctionDef. With until-eof every thread goes on
   past its ITERATIONS until standard input closes, so that the test, not this
   machine's speed, decides how many neighbours come and go meanwhile. Prints
   "ok <sessions> <functions>" or why it failed (exit 1). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void* Status;
typedef struct {
  const void* const* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)(void);
} ApiBase;
/* OrtApi entries by index (the table never reorders; API versions 1 and 13). */
enum {
  kGetErrorMessage = 2,
  kCreateEnv = 3,
  kCreateSession = 7,
  kCreateSessionOptions = 10,
  kSetIntraOpNumThreads = 24,
  kReleaseEnv = 92,
  kReleaseStatus = 93,
  kReleaseSession = 95,
  kReleaseSessionOptions = 100,
};

static const void* const* ort;
static void* env;
static const char* model;
static char* fdef;
static long fdef_size;
static int iterations;
static volatile int stop_busy;
static int until_eof, input_closed;
static int sessions_made, functions_added;
static pthread_mutex_t count_mu = PTHREAD_MUTEX_INITIALIZER;

/* TensorFlow's C API, through the default scope (the hooks first). */
static void* (*tf_new_status)(void);
static void (*tf_delete_status)(void*);
static int (*tf_get_code)(const void*);
static void* (*tfe_new_context_options)(void);
static void (*tfe_delete_context_options)(void*);
static void* (*tfe_new_context)(const void*, void*);
static void (*tfe_delete_context)(void*);
static void (*tfe_add_function_def)(void*, const char*, size_t, void*);
static void* tf_context;

#define ORT(i, type) ((type)ort[i])

static int ort_session(int intra) {
  Status (*create_options)(void**) = ORT(kCreateSessionOptions, Status(*)(void**));
  Status (*set_intra)(void*, int) = ORT(kSetIntraOpNumThreads, Status(*)(void*, int));
  Status (*create)(void*, const char*, void*, void**) =
      ORT(kCreateSession, Status(*)(void*, const char*, void*, void**));
  void (*release_session)(void*) = ORT(kReleaseSession, void (*)(void*));
  void (*release_options)(void*) = ORT(kReleaseSessionOptions, void (*)(void*));
  void (*release_status)(Status) = ORT(kReleaseStatus, void (*)(Status));
  const char* (*message)(Status) = ORT(kGetErrorMessage, const char* (*)(Status));
  void* opts = NULL;
  void* sess = NULL;
  Status st = create_options(&opts);
  if (!st && intra) st = set_intra(opts, intra);
  if (!st) st = create(env, model, opts, &sess);
  if (st) {
    fprintf(stderr, "ORT: %s\n", message(st));
    release_status(st);
    if (opts) release_options(opts);
    return -1;
  }
  release_session(sess);
  release_options(opts);
  return 0;
}

static int tf_function(void) {
  void* st = tf_new_status();
  tfe_add_function_def(tf_context, fdef, (size_t)fdef_size, st);
  const int code = tf_get_code(st);
  tf_delete_status(st);
  return code == 0 ? 0 : -1;
}

static void* adopter(void* arg) {
  const int id = (int)(intptr_t)arg;
  for (int i = 0;
       i < iterations || (until_eof && !__atomic_load_n(&input_closed, __ATOMIC_ACQUIRE)); ++i) {
    if (ort) {
      /* Every other session leaves the count to parwidth; the rest set their own. */
      if (ort_session((i + id) % 2 ? 0 : 1) != 0) return (void*)1;
      pthread_mutex_lock(&count_mu);
      ++sessions_made;
      pthread_mutex_unlock(&count_mu);
    }
    if (tf_context) {
      if (tf_function() != 0) return (void*)1;
      pthread_mutex_lock(&count_mu);
      ++functions_added;
      pthread_mutex_unlock(&count_mu);
    }
  }
  return NULL;
}

static void* busy(void* arg) {
  volatile unsigned long n = 0;
  while (!__atomic_load_n(&stop_busy, __ATOMIC_RELAXED)) ++n;
  return arg;
}

static void* watch_input(void* arg) {
  char buf[256];
  while (fread(buf, 1, sizeof buf, stdin) > 0) {
  }
  __atomic_store_n(&input_closed, 1, __ATOMIC_RELEASE);
  return arg;
}

static void* sym(const char* name) {
  void* p = dlsym(RTLD_DEFAULT, name);
  if (!p) fprintf(stderr, "missing %s\n", name);
  return p;
}

int main(int argc, char** argv) {
  if (argc != 8 && !(argc == 9 && strcmp(argv[8], "until-eof") == 0)) {
    fprintf(stderr,
            "usage: adopt_stress ORT_LIB MODEL TF_LIB FDEF THREADS ITERATIONS BUSY [until-eof]\n");
    return 2;
  }
  until_eof = argc == 9;
  model = argv[2];
  const int threads = atoi(argv[5]), nbusy = atoi(argv[7]);
  iterations = atoi(argv[6]);
  if (strcmp(argv[1], "-") != 0) {
    if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) return fprintf(stderr, "%s\n", dlerror()), 1;
    const ApiBase* (*base)(void) = (const ApiBase* (*)(void))sym("OrtGetApiBase");
    if (!base || !(ort = base()->GetApi(13))) return fprintf(stderr, "no ORT API 13\n"), 1;
    Status (*create_env)(int, const char*, void**) =
        ORT(kCreateEnv, Status(*)(int, const char*, void**));
    if (create_env(3, "adopt_stress", &env)) return fprintf(stderr, "ORT env\n"), 1;
  }
  if (strcmp(argv[3], "-") != 0) {
    if (!dlopen(argv[3], RTLD_NOW | RTLD_GLOBAL)) return fprintf(stderr, "%s\n", dlerror()), 1;
    FILE* f = fopen(argv[4], "rb");
    if (!f) return fprintf(stderr, "cannot read %s\n", argv[4]), 1;
    fseek(f, 0, SEEK_END);
    fdef_size = ftell(f);
    fseek(f, 0, SEEK_SET);
    fdef = malloc((size_t)fdef_size);
    if (fread(fdef, 1, (size_t)fdef_size, f) != (size_t)fdef_size) return 1;
    fclose(f);
    tf_new_status = (void* (*)(void))sym("TF_NewStatus");
    tf_delete_status = (void (*)(void*))sym("TF_DeleteStatus");
    tf_get_code = (int (*)(const void*))sym("TF_GetCode");
    tfe_new_context_options = (void* (*)(void))sym("TFE_NewContextOptions");
    tfe_delete_context_options = (void (*)(void*))sym("TFE_DeleteContextOptions");
    tfe_new_context = (void* (*)(const void*, void*))sym("TFE_NewContext");
    tfe_delete_context = (void (*)(void*))sym("TFE_DeleteContext");
    tfe_add_function_def =
        (void (*)(void*, const char*, size_t, void*))sym("TFE_ContextAddFunctionDef");
    if (!tf_new_status || !tf_delete_status || !tf_get_code || !tfe_new_context_options ||
        !tfe_delete_context_options || !tfe_new_context || !tfe_delete_context ||
        !tfe_add_function_def)
      return 1;
    void* st = tf_new_status();
    void* opts = tfe_new_context_options();
    tf_context = tfe_new_context(opts, st);
    tfe_delete_context_options(opts);
    if (tf_get_code(st) != 0 || !tf_context) return fprintf(stderr, "TF context\n"), 1;
    tf_delete_status(st);
  }
  pthread_t b[64], t[64];
  int nb = nbusy < 64 ? nbusy : 64, nt = threads < 64 ? threads : 64;
  for (int i = 0; i < nb; ++i) pthread_create(&b[i], NULL, busy, NULL);
  int failed = 0;
  pthread_t watcher;
  if (until_eof) pthread_create(&watcher, NULL, watch_input, NULL);
  for (int i = 0; i < nt; ++i) pthread_create(&t[i], NULL, adopter, (void*)(intptr_t)i);
  for (int i = 0; i < nt; ++i) {
    void* rc = NULL;
    pthread_join(t[i], &rc);
    failed |= rc != NULL;
  }
  __atomic_store_n(&stop_busy, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < nb; ++i) pthread_join(b[i], NULL);
  if (until_eof) pthread_join(watcher, NULL);
  if (tf_context) tfe_delete_context(tf_context);
  if (env) ORT(kReleaseEnv, void (*)(void*))(env);
  if (failed) return fprintf(stderr, "an adoption failed\n"), 1;
  printf("ok %d %d\n", sessions_made, functions_added);
  return 0;
}
