/*
 * diagram.c - the data of lesson 4's pictures (`make lesson4 plot`): diagram NAME FILE writes
 * picture NAME's cells, asked of the library, for diagram-NAME.gp to draw.
 */
#include "permute_diagram.h"

int main(int argc, char **argv) {
    const DiagramEntry pictures[] = {{"views", permute_diagram_views}, {"walk", permute_diagram_walk}};
    return diagram_main(argc, argv, pictures, 2);
}
