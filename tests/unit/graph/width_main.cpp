// Stand-alone driver for cli/cmd_width.cpp, so graph tests need not wait for cli/main.cpp.
int pw_cmd_width(int argc, char** argv);

int main(int argc, char** argv) {
  return pw_cmd_width(argc, argv);
}
