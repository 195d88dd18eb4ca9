#ifndef CNCURSESW_SHIM_H
#define CNCURSESW_SHIM_H
#define _XOPEN_SOURCE_EXTENDED 1
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <ncursesw/ncurses.h>
#endif
