/* Placeholder until this command lands; replaced by its owner. */
#include <stdio.h>

int tpb_cmd_view(int argc, char **argv);

int tpb_cmd_view(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tpb view: not implemented yet\n");
    return 2;
}
