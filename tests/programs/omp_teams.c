/* tests/programs/omp_teams.c: OpenMP team sizes per pthread, linked against the
   OpenMP runtime (libgomp with gcc; built again with clang against LLVM libomp
   as omp_teams_clang). See omp_teams_lib.c. */
int omp_teams_main(int argc, char** argv);

int main(int argc, char** argv) {
  return omp_teams_main(argc, argv);
}
