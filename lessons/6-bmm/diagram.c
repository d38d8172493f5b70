/*
 * diagram.c - the data of lesson 6's picture (`make lesson6 plot`): diagram NAME FILE writes
 * picture NAME's cells, asked of the library, for diagram-NAME.gp to draw.
 */
#include "bmm_diagram.h"

int main(int argc, char **argv) {
    const DiagramEntry pictures[] = {{"fold", bmm_diagram_fold}};
    return diagram_main(argc, argv, pictures, 1);
}
