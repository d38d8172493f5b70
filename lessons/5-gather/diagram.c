/*
 * diagram.c - the data of lesson 5's picture (`make lesson5 plot`): diagram NAME FILE writes
 * picture NAME's cells, asked of the library, for diagram-NAME.gp to draw.
 */
#include "gather_diagram.h"

int main(int argc, char **argv) {
    const DiagramEntry pictures[] = {{"rows", gather_diagram_rows}};
    return diagram_main(argc, argv, pictures, 1);
}
