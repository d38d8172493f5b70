/*
 * diagram.c - the data of lesson 2's picture (`make lesson2 plot`): diagram NAME FILE writes
 * picture NAME's cells, asked of the library, for diagram-NAME.gp to draw.
 */
#include "reduce_diagram.h"

int main(int argc, char **argv) {
    const DiagramEntry pictures[] = {{"sum", reduce_diagram_sum}};
    return diagram_main(argc, argv, pictures, 1);
}
