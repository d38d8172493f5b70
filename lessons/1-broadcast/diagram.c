/*
 * diagram.c - the data of lesson 1's pictures (`make lesson1 plot`): diagram NAME FILE writes
 * picture NAME's cells, asked of the library, for diagram-NAME.gp to draw.
 */
#include "broadcast_diagram.h"

int main(int argc, char **argv) {
    const DiagramEntry pictures[] = {{"reads", broadcast_diagram_reads}, {"grads", broadcast_diagram_grads}};
    return diagram_main(argc, argv, pictures, 2);
}
