#ifndef CNCURSESW_SHIM_H
#define CNCURSESW_SHIM_H

/* Without these two, the wide-character API (wget_wch, cchar_t, setcchar) is not declared. */
#define _XOPEN_SOURCE_EXTENDED 1
#define NCURSES_WIDECHAR 1

#include <langinfo.h>
#include <stdio.h>
#include <locale.h>
#include <ncursesw/ncurses.h>
#include <wchar.h>

/*
 * Swift cannot import function-like macros, and Swift 6 rejects the mutable globals
 * (stdscr, LINES, COLS, COLORS). These wrappers read them through the real headers so
 * that no value is ever hard-coded on the Swift side.
 */

/* Attributes. */
static inline attr_t cnc_a_normal(void) { return A_NORMAL; }
static inline attr_t cnc_a_bold(void) { return A_BOLD; }
static inline attr_t cnc_a_reverse(void) { return A_REVERSE; }
static inline attr_t cnc_a_dim(void) { return A_DIM; }
static inline attr_t cnc_a_underline(void) { return A_UNDERLINE; }
static inline attr_t cnc_color_pair(int pair) { return (attr_t)COLOR_PAIR(pair); }

/* Globals. */
static inline WINDOW *cnc_stdscr(void) { return stdscr; }
static inline int cnc_lines(void) { return LINES; }
static inline int cnc_cols(void) { return COLS; }
static inline int cnc_colors(void) { return COLORS; }
static inline int cnc_color_pairs(void) { return COLOR_PAIRS; }

/* The C streams curses draws to and reads from (Swift 6 rejects the globals themselves). */
static inline FILE *cnc_stdout(void) { return stdout; }
static inline FILE *cnc_stdin(void) { return stdin; }

/* Result codes. */
static inline int cnc_ok(void) { return OK; }
static inline int cnc_err(void) { return ERR; }
static inline int cnc_key_code_yes(void) { return KEY_CODE_YES; }

/* Key codes that wget_wch reports together with KEY_CODE_YES. */
static inline int cnc_key_up(void) { return KEY_UP; }
static inline int cnc_key_down(void) { return KEY_DOWN; }
static inline int cnc_key_left(void) { return KEY_LEFT; }
static inline int cnc_key_right(void) { return KEY_RIGHT; }
static inline int cnc_key_home(void) { return KEY_HOME; }
static inline int cnc_key_end(void) { return KEY_END; }
static inline int cnc_key_npage(void) { return KEY_NPAGE; }
static inline int cnc_key_ppage(void) { return KEY_PPAGE; }
static inline int cnc_key_btab(void) { return KEY_BTAB; }
static inline int cnc_key_backspace(void) { return KEY_BACKSPACE; }
static inline int cnc_key_dc(void) { return KEY_DC; }
static inline int cnc_key_enter(void) { return KEY_ENTER; }
static inline int cnc_key_resize(void) { return KEY_RESIZE; }
static inline int cnc_key_f0(void) { return KEY_F0; }
/* KEY_F(n) for n in 0...63; ncurses reserves exactly that many codes. */
static inline int cnc_key_f(int n) { return KEY_F(n); }
static inline int cnc_key_f_count(void) { return 64; }

/* The codeset name of the current locale (after setlocale), e.g. "UTF-8" or "ANSI_X3.4-1968". */
static inline const char *cnc_codeset(void) { return nl_langinfo(CODESET); }

/*
 * Puts one grapheme at (y, x): `wch` is a NUL-terminated array holding one spacing
 * character followed by at most CCHARW_MAX - 1 combining characters. Returns ERR when
 * setcchar rejects the text; mvwadd_wch also reports ERR for the bottom-right cell of a
 * window without scrolling, although it did place the character there.
 */
static inline int cnc_put_cell(WINDOW *win, int y, int x, const wchar_t *wch, attr_t attrs, int pair) {
    cchar_t cell;
    if (setcchar(&cell, wch, attrs, (NCURSES_PAIRS_T)pair, NULL) == ERR) {
        return ERR;
    }
    return mvwadd_wch(win, y, x, &cell);
}

/*
 * The columns the terminal gives a character in the current locale (-1 if unprintable). glibc declares
 * wcwidth only for _XOPEN_SOURCE, which the Swift Glibc module is not built with.
 */
extern int wcwidth(wchar_t c);
static inline int cnc_wcwidth(wchar_t c) { return wcwidth(c); }

/* How many wide characters one cchar_t holds (one spacing character plus combining ones). */
static inline int cnc_cchar_capacity(void) { return CCHARW_MAX; }

#endif
