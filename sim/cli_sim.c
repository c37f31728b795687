/* Placeholder until this command lands; replaced by its owner. */
#include <stdio.h>

int tpb_cmd_sim(int argc, char **argv);

int tpb_cmd_sim(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tpb sim: not implemented yet\n");
    return 2;
}
