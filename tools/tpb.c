/* tpb - the tpbsim command-line program: git-style subcommands.
 * Each subcommand lives with its component (isa/, encoder/, sim/, golden/,
 * viz/) as `int tpb_cmd_<name>(int argc, char **argv)`, argv[0] being the
 * subcommand name.  Only main() exits. */
#include <stdio.h>
#include <string.h>

int tpb_cmd_as(int argc, char **argv);
int tpb_cmd_dis(int argc, char **argv);
int tpb_cmd_isa(int argc, char **argv);
int tpb_cmd_compile(int argc, char **argv);
int tpb_cmd_sim(int argc, char **argv);
int tpb_cmd_check(int argc, char **argv);
int tpb_cmd_run(int argc, char **argv);
int tpb_cmd_view(int argc, char **argv);

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} command_t;

static const command_t commands[] = {
    { "as",      tpb_cmd_as,      "assemble text into a .bin stream of 64-byte bundles" },
    { "dis",     tpb_cmd_dis,     "disassemble a .bin or every stream of an artifact directory" },
    { "isa",     tpb_cmd_isa,     "print the instruction table (opcodes, engines, fields, docs)" },
    { "compile", tpb_cmd_compile, "compile a kernel (JSON) into an artifact directory" },
    { "sim",     tpb_cmd_sim,     "simulate an artifact directory on .npy inputs" },
    { "check",   tpb_cmd_check,   "compare simulator outputs with golden .npy files" },
    { "run",     tpb_cmd_run,     "compile + simulate + check a kernel or golden case" },
    { "view",    tpb_cmd_view,    "open the timeline viewer on a trace (or render a screenshot)" },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: tpb <command> [options]\n\n"
               "tpbsim: encoder, simulator and checker for a Trainium-style NeuronCore.\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'tpb <command> --help' for the options of one command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("tpb 0.1.0\n");
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "tpb: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
