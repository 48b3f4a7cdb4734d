// cli/commands: the subcommands of `parwidth`, each int cmd(argc, argv) with
// argv[0] the subcommand's name. Exit codes: 0 ok, 1 failure, 2 usage or
// unreadable input, else the wrapped program's own.
#pragma once

int pw_cmd_run(int argc, char** argv);
int pw_cmd_plan(int argc, char** argv);
int pw_cmd_topo(int argc, char** argv);
int pw_cmd_width(int argc, char** argv);
int pw_cmd_sweep(int argc, char** argv);
int pw_cmd_calibrate(int argc, char** argv);
int pw_cmd_node(int argc, char** argv);
int pw_cmd_tune(int argc, char** argv);
int pw_cmd_plans(int argc, char** argv);
