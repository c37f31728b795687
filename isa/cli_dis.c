/* Placeholder until this command lands; replaced by its owner. */
#include <stdio.h>

int tpb_cmd_dis(int argc, char **argv);

int tpb_cmd_dis(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tpb dis: not implemented yet\n");
    return 2;
}
