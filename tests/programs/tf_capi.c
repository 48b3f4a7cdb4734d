/* tests/programs/tf_capi: a C program on TensorFlow's C API: imports a GraphDef,
   creates a session with an optional config (inter, intra as argv), runs nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <tensorflow/c/c_api.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char data[1 << 22];
  size_t n = fread(data, 1, sizeof data, f);
  fclose(f);
  TF_Status* st = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  TF_Buffer* buf = TF_NewBufferFromString(data, n);
  TF_ImportGraphDefOptions* io = TF_NewImportGraphDefOptions();
  TF_GraphImportGraphDef(g, buf, io, st);
  if (TF_GetCode(st) != TF_OK) {
    fprintf(stderr, "import: %s\n", TF_Message(st));
    return 1;
  }
  TF_SessionOptions* so = TF_NewSessionOptions();
  if (argc >= 4) {
    /* ConfigProto{intra_op_parallelism_threads (2), inter_op_parallelism_threads (5)} */
    unsigned char cfg[4] = {0x10, (unsigned char)atoi(argv[3]), 0x28, (unsigned char)atoi(argv[2])};
    TF_SetConfig(so, cfg, sizeof cfg, st);
    if (TF_GetCode(st) != TF_OK) {
      fprintf(stderr, "config: %s\n", TF_Message(st));
      return 1;
    }
  }
  TF_Session* s = TF_NewSession(g, so, st);
  if (TF_GetCode(st) != TF_OK) {
    fprintf(stderr, "session: %s\n", TF_Message(st));
    return 1;
  }
  printf("session created\n");
  TF_CloseSession(s, st);
  TF_DeleteSession(s, st);
  TF_DeleteSessionOptions(so);
  TF_DeleteImportGraphDefOptions(io);
  TF_DeleteBuffer(buf);
  TF_DeleteGraph(g);
  TF_DeleteStatus(st);
  return 0;
}
