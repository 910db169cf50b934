/*
 * guti C bot (C99): a small UGI engine for the seven games of guti/rules.
 *
 * Two strategies (option `Search`): greedy (the default): among the legal
 * moves, play a capture that takes the most pieces (ties broken at random);
 * when there is no capture, a random step. The PRNG is seeded from the
 * `Seed` option, so a given command sequence always produces the same
 * answers. alphabeta: an iterative-deepening material search (see the
 * "Alpha-beta search" section).
 *
 * Rules follow protocol.md section 3: compulsory capture, maximal multi-jumps
 * (every distinct landing path is its own move), the four end rules in order
 * (Pretwa and Gol-skuish "three or fewer", no legal move, 50-ply clock, threefold
 * repetition counted from the `position` base).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXPTS 44   /* points are 1..43 (Gol-skuish has 43) */
#define NGAMES 7
#define MAXNB 12
#define MAXPATH 32
#define ECHO_MAX 200 /* how much of a bad line is echoed back */

enum { EMPTY = 0, WHITE = 1, BLACK = 2 };
enum { R_NONE = 0, R_WHITE = 1, R_BLACK = 2, R_DRAW = 3 };

/* ------------------------------------------------------------------ */
/* Output                                                               */

static void out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Geometry: lines of the board; adjacency and jumps derive from them.  */

typedef struct {
    const char *name;
    int npoints;
    int nrows;
    int rows[8];
    const char *startfen;
    int three_or_fewer; /* end rule 1 (Pretwa, Gol-skuish) */
    int nb[MAXPTS][MAXNB];
    int nnb[MAXPTS];
    int jover[MAXPTS][MAXNB];
    int jto[MAXPTS][MAXNB];
    int njump[MAXPTS];
} Game;

static Game GAMES[NGAMES];

static void add_edge(Game *g, int a, int b)
{
    for (int i = 0; i < g->nnb[a]; i++)
        if (g->nb[a][i] == b) return;
    g->nb[a][g->nnb[a]++] = b;
}

static void add_jump(Game *g, int a, int over, int to)
{
    for (int i = 0; i < g->njump[a]; i++)
        if (g->jover[a][i] == over && g->jto[a][i] == to) return;
    g->jover[a][g->njump[a]] = over;
    g->jto[a][g->njump[a]++] = to;
}

/* A line is a sequence of points; closed circles are listed with their
 * first two points repeated at the end so that every triple appears. */
static void add_line(Game *g, const int *pts, int n)
{
    for (int i = 0; i + 1 < n; i++) {
        add_edge(g, pts[i], pts[i + 1]);
        add_edge(g, pts[i + 1], pts[i]);
    }
    for (int i = 0; i + 2 < n; i++) {
        add_jump(g, pts[i], pts[i + 1], pts[i + 2]);
        add_jump(g, pts[i + 2], pts[i + 1], pts[i]);
    }
}

/* Lines as {count, points...}, a count of 0 ending the list. */
static void add_lines(Game *g, const int (*lines)[8])
{
    for (int i = 0; lines[i][0]; i++) add_line(g, lines[i] + 1, lines[i][0]);
}

static Game *new_game(int index, const char *name, int npoints, int nrows, const int *rows,
                      const char *startfen)
{
    Game *g = &GAMES[index];
    memset(g, 0, sizeof *g);
    g->name = name;
    g->npoints = npoints;
    g->nrows = nrows;
    memcpy(g->rows, rows, (size_t)nrows * sizeof *rows);
    g->startfen = startfen;
    return g;
}

/* The centre (point 1) and `circles` rings of six points, cut by three
 * diameters (Pretwa: 3 rings, Gol-skuish: 7). Ring c, ray r is point
 * 2 + 6(c-1) + r; rays run clockwise from 12 o'clock. */
static void circles_board(Game *g, int circles)
{
    for (int c = 0; c < circles; c++) {
        int ring[8];
        for (int i = 0; i < 8; i++) ring[i] = 2 + 6 * c + i % 6;
        add_line(g, ring, 8);
    }
    for (int r = 0; r < 3; r++) {
        int d[2 * 7 + 1], n = 0;
        for (int c = circles - 1; c >= 0; c--) d[n++] = 2 + 6 * c + r + 3;
        d[n++] = 1;
        for (int c = 0; c < circles; c++) d[n++] = 2 + 6 * c + r;
        add_line(g, d, n);
    }
}

/* The seven games of guti/rules/games.py, in its order, from the same lines. */
static void init_games(void)
{
    static const int eg_lines[][8] = {
        {5, 1, 2, 3, 4, 5}, {3, 6, 7, 8}, {3, 9, 10, 11}, {3, 13, 14, 15},
        {3, 16, 17, 18}, {5, 19, 20, 21, 22, 23},
        {7, 1, 6, 9, 12, 15, 18, 23}, {7, 5, 8, 11, 12, 13, 16, 19},
        {7, 3, 7, 10, 12, 14, 17, 21}, {4, 2, 6, 16, 20}, {4, 4, 8, 18, 22}, {0},
    };
    static const int lau_lines[][8] = {
        {3, 1, 2, 3}, {3, 4, 5, 6}, {3, 7, 8, 9}, {3, 11, 12, 13}, {3, 14, 15, 16},
        {3, 17, 18, 19}, {7, 1, 4, 7, 10, 13, 16, 19}, {7, 3, 6, 9, 10, 11, 14, 17},
        {7, 2, 5, 8, 10, 12, 15, 18}, {0},
    };
    static const int dash_lines[][8] = {
        {3, 1, 2, 3}, {3, 4, 5, 6}, {3, 7, 8, 9}, {3, 10, 11, 12}, {3, 13, 14, 15},
        {3, 16, 17, 18}, {3, 19, 20, 21}, {7, 1, 4, 7, 11, 15, 18, 21},
        {7, 3, 6, 9, 11, 13, 16, 19}, {7, 2, 5, 8, 11, 14, 17, 20}, {3, 1, 10, 19},
        {3, 3, 12, 21}, {0},
    };
    static const int alq_lines[][8] = {
        {5, 1, 2, 3, 4, 5}, {5, 6, 7, 8, 9, 10}, {5, 11, 12, 13, 14, 15},
        {5, 16, 17, 18, 19, 20}, {5, 21, 22, 23, 24, 25}, {5, 1, 6, 11, 16, 21},
        {5, 2, 7, 12, 17, 22}, {5, 3, 8, 13, 18, 23}, {5, 4, 9, 14, 19, 24},
        {5, 5, 10, 15, 20, 25}, {5, 1, 7, 13, 19, 25}, {5, 5, 9, 13, 17, 21},
        {3, 3, 7, 11}, {3, 3, 9, 15}, {3, 11, 17, 23}, {3, 15, 19, 23}, {0},
    };
    static const int eg_rows[] = {5, 3, 3, 1, 3, 3, 5}, wing_rows[] = {3, 3, 3, 1, 3, 3, 3};
    static const int dash_rows[] = {3, 3, 3, 3, 3, 3, 3}, alq_rows[] = {5, 5, 5, 5, 5};
    static const int ring_rows[] = {1, 6, 6, 6, 6, 6, 6, 6};
    Game *g;
    add_lines(new_game(0, "egara-guti", 23, 7, eg_rows, "bbbbb/bbb/bbb/1/www/www/wwwww w 0 1"),
              eg_lines);
    g = new_game(1, "pretwa", 19, 4, ring_rows, "1/bbwwwb/bbwwwb/bbwwwb w 0 1");
    g->three_or_fewer = 1;
    circles_board(g, 3);
    add_lines(new_game(2, "lau-kata-kati", 19, 7, wing_rows, "bbb/bbb/bbb/1/www/www/www w 0 1"),
              lau_lines);
    add_lines(new_game(3, "dash-guti", 21, 7, dash_rows, "bbb/bbb/bbb/w1b/www/www/www w 0 1"),
              dash_lines);
    g = new_game(4, "gol-skuish", 43, 8, ring_rows,
                 "1/bbwwwb/bbwwwb/bbwwwb/bbwwwb/bbwwwb/bbwwwb/bbwwwb w 0 1");
    g->three_or_fewer = 1;
    circles_board(g, 7);
    add_lines(new_game(5, "alquerque", 25, 5, alq_rows, "bbbbb/bbbbb/bb1ww/wwwww/wwwww w 0 1"),
              alq_lines);
    add_lines(new_game(6, "butterfly", 19, 7, wing_rows, "bbb/bbb/bbb/1/www/www/www w 0 1"),
              lau_lines);
}

/* "egara-guti, pretwa, ..." for error messages. */
static const char *game_names(void)
{
    static char names[256];
    if (!*names)
        for (int i = 0; i < NGAMES; i++) {
            if (i) strcat(names, ", ");
            strcat(names, GAMES[i].name);
        }
    return names;
}

static const Game *find_game(const char *name)
{
    for (int i = 0; i < NGAMES; i++) {
        const char *a = GAMES[i].name, *b = name;
        while (*a && tolower((unsigned char)*b) == *a) a++, b++;
        if (!*a && !*b) return &GAMES[i];
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Moves and positions                                                  */

typedef struct {
    unsigned char path[MAXPATH]; /* start point, then every landing point */
    unsigned char cap[MAXPATH];  /* points jumped over (empty for a step) */
    int npath, ncap;
} Move;

typedef struct {
    Move *m;
    int n, cap;
} MoveList;

static void ml_push(MoveList *ml, const Move *m)
{
    if (ml->n == ml->cap) {
        int nc = ml->cap ? ml->cap * 2 : 64;
        Move *p = realloc(ml->m, (size_t)nc * sizeof *p);
        if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
        ml->m = p;
        ml->cap = nc;
    }
    ml->m[ml->n++] = *m;
}

/* Exact key of a position: 2 bits per point (points 1..31 in `a` with the
 * side to move, the rest in `b`). */
typedef struct {
    uint64_t a, b;
} Key;

typedef struct {
    const Game *g;
    unsigned char cell[MAXPTS];
    int side;
    long clock, fullmove;
    Key *hist; /* position keys since the base, current one last */
    size_t nhist, caphist;
} Pos;

static Key pos_key(const Pos *p)
{
    Key k = {(uint64_t)(p->side == BLACK), 0};
    int n = p->g->npoints;
    for (int i = 1; i <= n && i <= 31; i++) k.a = (k.a << 2) | p->cell[i];
    for (int i = 32; i <= n; i++) k.b = (k.b << 2) | p->cell[i];
    return k;
}

static void hist_push(Pos *p, Key k)
{
    if (p->nhist == p->caphist) {
        size_t nc = p->caphist ? p->caphist * 2 : 256;
        Key *h = realloc(p->hist, nc * sizeof *h);
        if (!h) { fprintf(stderr, "out of memory\n"); exit(1); }
        p->hist = h;
        p->caphist = nc;
    }
    p->hist[p->nhist++] = k;
}

static void pos_free(Pos *p)
{
    free(p->hist);
    p->hist = NULL;
    p->nhist = p->caphist = 0;
}

static int count(const Pos *p, int who)
{
    int n = 0;
    for (int i = 1; i <= p->g->npoints; i++) n += p->cell[i] == who;
    return n;
}

static void move_str(const Move *m, char *buf)
{
    char *s = buf;
    for (int i = 0; i < m->npath; i++) {
        if (i) *s++ = m->ncap ? 'x' : '-';
        s += sprintf(s, "%d", m->path[i]);
    }
    *s = 0;
}

/* Depth-first search of the jump tree of the piece now standing on `at`. */
static void gen_jumps(Pos *p, Move *cur, int at, int me, MoveList *ml)
{
    const Game *g = p->g;
    int enemy = 3 - me, extended = 0;
    for (int j = 0; j < g->njump[at]; j++) {
        int over = g->jover[at][j], to = g->jto[at][j];
        if (p->cell[over] != enemy || p->cell[to] != EMPTY) continue;
        extended = 1;
        p->cell[over] = EMPTY;
        cur->path[cur->npath++] = (unsigned char)to;
        cur->cap[cur->ncap++] = (unsigned char)over;
        gen_jumps(p, cur, to, me, ml);
        cur->npath--;
        cur->ncap--;
        p->cell[over] = (unsigned char)enemy;
    }
    if (!extended && cur->npath > 1) ml_push(ml, cur);
}

/* Moves by the movement rules alone (end rules not applied). */
static void gen_raw(Pos *p, MoveList *ml)
{
    const Game *g = p->g;
    int me = p->side;
    Move cur;
    ml->n = 0;
    for (int a = 1; a <= g->npoints; a++) {
        if (p->cell[a] != me) continue;
        p->cell[a] = EMPTY; /* lifted: the path may come back to its start */
        cur.npath = 1;
        cur.ncap = 0;
        cur.path[0] = (unsigned char)a;
        gen_jumps(p, &cur, a, me, ml);
        p->cell[a] = (unsigned char)me;
    }
    if (ml->n) return;
    for (int a = 1; a <= g->npoints; a++) {
        if (p->cell[a] != me) continue;
        for (int i = 0; i < g->nnb[a]; i++) {
            int b = g->nb[a][i];
            if (p->cell[b] != EMPTY) continue;
            cur.npath = 2;
            cur.ncap = 0;
            cur.path[0] = (unsigned char)a;
            cur.path[1] = (unsigned char)b;
            ml_push(ml, &cur);
        }
    }
}

/* Third occurrence of the current position since the base? Positions
 * before the last capture hold more pieces, so only `clock` plies back
 * need to be looked at. */
static int is_repetition(const Pos *p)
{
    if (p->nhist < 5) return 0;
    Key k = p->hist[p->nhist - 1];
    size_t back = (size_t)p->clock < p->nhist - 1 ? (size_t)p->clock : p->nhist - 1;
    size_t lo = p->nhist - 1 - back;
    int seen = 1;
    for (size_t i = p->nhist - 1; i >= lo + 2; i -= 2) {
        if (p->hist[i - 2].a == k.a && p->hist[i - 2].b == k.b && ++seen >= 3) return 1;
    }
    return 0;
}

static int score_by_count(const Pos *p)
{
    int w = count(p, WHITE), b = count(p, BLACK);
    return w > b ? R_WHITE : b > w ? R_BLACK : R_DRAW;
}

/* End rules 1-4 in order; fills `ml` with the raw moves when computed. */
static int outcome(Pos *p, MoveList *ml)
{
    if (p->g->three_or_fewer) {
        int w = count(p, WHITE), b = count(p, BLACK);
        if (w <= 3 && b > 3) { ml->n = 0; return R_BLACK; }
        if (b <= 3 && w > 3) { ml->n = 0; return R_WHITE; }
    }
    gen_raw(p, ml);
    if (ml->n == 0) return p->side == WHITE ? R_BLACK : R_WHITE;
    if (p->clock >= 50 || is_repetition(p)) return score_by_count(p);
    return R_NONE;
}

static void legal_moves(Pos *p, MoveList *ml)
{
    if (outcome(p, ml) != R_NONE) ml->n = 0;
}

static void make(Pos *p, const Move *m)
{
    int me = p->side;
    p->cell[m->path[0]] = EMPTY;
    for (int i = 0; i < m->ncap; i++) p->cell[m->cap[i]] = EMPTY;
    p->cell[m->path[m->npath - 1]] = (unsigned char)me;
    p->clock = m->ncap ? 0 : p->clock + 1;
    if (me == BLACK) p->fullmove++;
    p->side = 3 - me;
    hist_push(p, pos_key(p));
}

static void unmake(Pos *p, const Move *m, long oldclock)
{
    p->nhist--;
    p->side = 3 - p->side;
    int me = p->side;
    if (me == BLACK) p->fullmove--;
    p->clock = oldclock;
    p->cell[m->path[m->npath - 1]] = EMPTY;
    for (int i = 0; i < m->ncap; i++) p->cell[m->cap[i]] = (unsigned char)(3 - me);
    p->cell[m->path[0]] = (unsigned char)me;
}

/* ------------------------------------------------------------------ */
/* FEN                                                                   */

/* Parses a non-negative decimal; 0 on success. Rejects signs, junk and
 * absurdly large values. */
static int parse_long(const char *s, long *v)
{
    long x = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s) || x > 100000000L) return -1;
        x = x * 10 + (*s - '0');
    }
    *v = x;
    return 0;
}

/* FEN CLOCK or MOVE (protocol.md 5.6): 0 to 999999999, no leading zero; 0 on success. */
static int fen_number(const char *s, long *v)
{
    size_t n = strlen(s);
    if (n == 0 || n > 9 || (s[0] == '0' && n > 1)) return -1;
    return parse_long(s, v);
}

/* Sets *p from FEN fields; on error writes a message and leaves *p alone. */
static int set_fen(Pos *p, const Game *g, char **f, int nf, char *err, size_t errn)
{
    Pos q;
    memset(&q, 0, sizeof q);
    q.g = g;
    q.clock = 0;
    q.fullmove = 1;
    if (nf < 2 || nf > 4) {
        snprintf(err, errn, "FEN needs 2 to 4 fields (CELLS SIDE [CLOCK [MOVE]]), got %d", nf);
        return -1;
    }
    const char *c = f[0];
    int pt = 1;
    for (int row = 0; row < g->nrows; row++) {
        int left = g->rows[row];
        if (row > 0) {
            if (*c != '/') {
                snprintf(err, errn, "bad FEN cells '%.60s': row %d must be preceded by '/'", f[0], row + 1);
                return -1;
            }
            c++;
        }
        while (left > 0) {
            if (*c == 'w' || *c == 'b') {
                q.cell[pt++] = *c == 'w' ? WHITE : BLACK;
                left--;
                c++;
            } else if (*c >= '1' && *c <= '9') {
                int n = 0;
                while (isdigit((unsigned char)*c) && n <= 100) n = n * 10 + (*c++ - '0');
                if (n > left) {
                    snprintf(err, errn, "bad FEN cells '%.60s': empty count %d runs past the end of row %d", f[0], n, row + 1);
                    return -1;
                }
                for (int i = 0; i < n; i++) q.cell[pt++] = EMPTY;
                left -= n;
            } else if (*c == '0') {
                snprintf(err, errn, "bad FEN cells '%.60s': empty count in row %d is 0 or has a leading zero", f[0], row + 1);
                return -1;
            } else if (*c == '/' || *c == 0) {
                snprintf(err, errn, "bad FEN cells '%.60s': row %d has %d points, needs %d", f[0], row + 1, g->rows[row] - left, g->rows[row]);
                return -1;
            } else {
                snprintf(err, errn, "bad FEN cells '%.60s': unexpected character '%c' in row %d", f[0], *c, row + 1);
                return -1;
            }
        }
    }
    if (*c == '/') {
        snprintf(err, errn, "bad FEN cells '%.60s': more than %d rows for %s", f[0], g->nrows, g->name);
        return -1;
    }
    if (*c) {
        snprintf(err, errn, "bad FEN cells '%.60s': row %d is too long", f[0], g->nrows);
        return -1;
    }
    if (strcmp(f[1], "w") && strcmp(f[1], "b")) {
        snprintf(err, errn, "bad FEN side '%.20s': must be w or b", f[1]);
        return -1;
    }
    q.side = f[1][0] == 'w' ? WHITE : BLACK;
    if (nf >= 3 && fen_number(f[2], &q.clock)) {
        snprintf(err, errn, "bad FEN clock '%.20s': must be 0 to 999999999, no leading zero", f[2]);
        return -1;
    }
    if (nf >= 4 && (fen_number(f[3], &q.fullmove) || q.fullmove < 1)) {
        snprintf(err, errn, "bad FEN move number '%.20s': must be 1 to 999999999, no leading zero", f[3]);
        return -1;
    }
    pos_free(p);
    *p = q;
    hist_push(p, pos_key(p));
    return 0;
}

static void set_start(Pos *p, const Game *g)
{
    char buf[128], err[200], *f[4];
    int nf = 0;
    strcpy(buf, g->startfen);
    for (char *t = strtok(buf, " "); t && nf < 4; t = strtok(NULL, " ")) f[nf++] = t;
    set_fen(p, g, f, nf, err, sizeof err);
}

static void fen(const Pos *p, char *buf)
{
    char *s = buf;
    int pt = 1;
    for (int row = 0; row < p->g->nrows; row++) {
        if (row) *s++ = '/';
        int empty = 0;
        for (int i = 0; i < p->g->rows[row]; i++, pt++) {
            if (p->cell[pt] == EMPTY) { empty++; continue; }
            if (empty) s += sprintf(s, "%d", empty), empty = 0;
            *s++ = p->cell[pt] == WHITE ? 'w' : 'b';
        }
        if (empty) s += sprintf(s, "%d", empty);
    }
    sprintf(s, " %c %ld %ld", p->side == WHITE ? 'w' : 'b', p->clock, p->fullmove);
}

/* ------------------------------------------------------------------ */
/* Perft                                                                 */

static MoveList *pool;
static int npool;

static uint64_t perft(Pos *p, int depth, int ply)
{
    if (depth == 0) return 1;
    MoveList *ml = &pool[ply];
    legal_moves(p, ml);
    if (depth == 1) return (uint64_t)ml->n;
    uint64_t n = 0;
    for (int i = 0; i < ml->n; i++) {
        long clk = p->clock;
        Move m = ml->m[i]; /* deeper plies reuse other lists; copy is safe */
        make(p, &m);
        n += perft(p, depth - 1, ply + 1);
        unmake(p, &m, clk);
    }
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

typedef struct {
    char s[MAXPATH * 4];
    uint64_t n;
} DivLine;

static void do_perft(Pos *p, int depth)
{
    if (depth + 1 > npool) {
        MoveList *np = realloc(pool, (size_t)(depth + 1) * sizeof *np);
        if (!np) { out("info string error out of memory"); return; }
        for (int i = npool; i <= depth; i++) memset(&np[i], 0, sizeof np[i]);
        pool = np;
        npool = depth + 1;
    }
    if (depth == 0) { out("nodes 1"); return; }
    MoveList ml = {0};
    legal_moves(p, &ml);
    DivLine *d = malloc((size_t)(ml.n ? ml.n : 1) * sizeof *d);
    if (!d) { out("info string error out of memory"); free(ml.m); return; }
    uint64_t total = 0;
    for (int i = 0; i < ml.n; i++) {
        long clk = p->clock;
        move_str(&ml.m[i], d[i].s);
        make(p, &ml.m[i]);
        d[i].n = perft(p, depth - 1, 1);
        unmake(p, &ml.m[i], clk);
        total += d[i].n;
    }
    qsort(d, (size_t)ml.n, sizeof *d, cmp_str);
    for (int i = 0; i < ml.n; i++) printf("%s: %llu\n", d[i].s, (unsigned long long)d[i].n);
    out("nodes %llu", (unsigned long long)total);
    free(d);
    free(ml.m);
}

/* ------------------------------------------------------------------ */
/* PRNG (splitmix64) and the greedy choice                               */

static uint64_t rng_state = 1;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int choose(const MoveList *ml)
{
    int best = -1, ties = 0, pick = 0;
    for (int i = 0; i < ml->n; i++) {
        int c = ml->m[i].ncap;
        if (c > best) best = c, ties = 0;
        if (c == best && rng_next() % (uint64_t)(++ties) == 0) pick = i; /* reservoir */
    }
    return pick;
}

/* ------------------------------------------------------------------ */
/* Alpha-beta search (option Search = alphabeta)                         */
/*
 * Iterative deepening negamax with alpha-beta, material-only evaluation,
 * no transposition table: a plain compiled opponent of the kind a first
 * afternoon produces. Capture is compulsory, so a position where the side
 * to move can capture is never scored: at depth 0 the search goes on
 * through capture chains until the position is quiet (a quiescence search
 * without stand-pat). The end rules score as wins, losses or draws at
 * their distance; the previous iteration's best move is searched first.
 */

#define MATE 30000
#define MATE_BOUND (MATE - 2 * MAX_PLY)
#define MAX_PLY 128
#define MAX_DEPTH 64
#define CHECK_EVERY 1024 /* nodes between looks at the clock */

typedef struct {
    double hard_at;   /* ms on the monotonic clock: abort the iteration (0: none) */
    double soft_at;   /* do not start another iteration after this (0: none) */
    long long node_limit; /* 0: none */
    int max_depth;
} Budget;

static long long nodes;
static int aborted;
static Budget budget;
static MoveList search_lists[MAX_PLY + 1];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Wins, losses and draws by the end rules 3 and 4: the side with more pieces wins. */
static int score_end_by_count(const Pos *p, int ply)
{
    int d = count(p, p->side) - count(p, 3 - p->side);
    return d > 0 ? MATE - ply : d < 0 ? ply - MATE : 0;
}

static int negamax(Pos *p, int depth, int alpha, int beta, int ply)
{
    if ((++nodes & (CHECK_EVERY - 1)) == 0) {
        if ((budget.hard_at > 0 && now_ms() >= budget.hard_at)
            || (budget.node_limit > 0 && nodes >= budget.node_limit))
            aborted = 1;
    }
    if (aborted) return 0;
    int me = p->side, mine = count(p, me), theirs = count(p, 3 - me);
    if (p->g->three_or_fewer && (mine <= 3) != (theirs <= 3))
        return mine > theirs ? MATE - ply : ply - MATE;
    MoveList *ml = &search_lists[ply];
    gen_raw(p, ml);
    if (ml->n == 0) return ply - MATE;
    if (p->clock >= 50 || is_repetition(p)) return score_end_by_count(p, ply);
    int captures = ml->m[0].ncap > 0;
    if ((depth <= 0 && !captures) || ply >= MAX_PLY) return 100 * (mine - theirs);
    int best = -MATE - 1;
    for (int i = 0; i < ml->n; i++) {
        /* most pieces taken first (selection: the list is short) */
        int pick = i;
        for (int j = i + 1; j < ml->n; j++)
            if (ml->m[j].ncap > ml->m[pick].ncap) pick = j;
        if (pick != i) {
            Move t = ml->m[i];
            ml->m[i] = ml->m[pick];
            ml->m[pick] = t;
        }
        Move m = ml->m[i]; /* deeper plies reuse other lists; a copy is safe */
        long clk = p->clock;
        make(p, &m);
        int score = -negamax(p, ml->n == 1 ? depth : depth - 1, -beta, -alpha, ply + 1);
        unmake(p, &m, clk);
        if (aborted) return 0;
        if (score > best) {
            best = score;
            if (score > alpha) alpha = score;
            if (alpha >= beta) break;
        }
    }
    return best;
}

/* How long to think: about remaining/30 + 3/4 of the increment, an iteration
 * cut off at twice that and never past 30 % of what is left after a safety
 * margin (50 ms or 5 %: a loaded machine can stall a process that long);
 * with the clock nearly gone, a third of the increment. movetime less a margin. */
static void plan_budget(long long mytime, long long myinc, long long movetime, long depth,
                        long long node_limit, double start)
{
    budget.hard_at = budget.soft_at = 0;
    budget.node_limit = node_limit;
    budget.max_depth = depth > 0 && depth < MAX_DEPTH ? (int)depth : MAX_DEPTH;
    if (mytime >= 0) {
        double left = (double)(mytime > 0 ? mytime : 0), inc = (double)(myinc > 0 ? myinc : 0);
        double margin = left * 0.05 > 50 ? left * 0.05 : 50;
        double usable = left - margin, hard, soft;
        if (usable <= 1) {
            hard = soft = 1;
        } else if (usable <= 3 * (inc > 1 ? inc : 1)) {
            hard = inc / 3 < usable * 0.3 ? inc / 3 : usable * 0.3;
            if (hard < 1) hard = 1;
            soft = hard * 0.3;
        } else {
            double target = usable / 30 + inc * 0.75;
            hard = target * 2 < usable * 0.3 ? target * 2 : usable * 0.3;
            soft = target * 0.5;
        }
        budget.hard_at = start + hard;
        budget.soft_at = start + soft;
    }
    if (movetime >= 0) {
        double margin = (double)movetime * 0.05 > 10 ? (double)movetime * 0.05 : 10;
        double hard = (double)movetime - margin < 1 ? 1 : (double)movetime - margin;
        if (budget.hard_at == 0 || start + hard < budget.hard_at) budget.hard_at = start + hard;
        if (budget.soft_at == 0 || start + hard * 0.6 < budget.soft_at)
            budget.soft_at = start + hard * 0.6;
    }
}

static void print_score(char *buf, int score)
{
    if (score > MATE_BOUND) sprintf(buf, "win %d", MATE - score);
    else if (score < -MATE_BOUND) sprintf(buf, "loss %d", MATE + score);
    else sprintf(buf, "cp %d", score);
}

/* Iterative deepening over the root moves `ml` (at least one); the index of
 * the move to play. One `info` line per finished iteration. */
static int search_root(Pos *p, MoveList *ml, double start)
{
    int order[4096], n = ml->n < 4096 ? ml->n : 4096, best_index = 0;
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++) { /* most pieces taken first, stable */
        int v = order[i], j = i;
        while (j > 0 && ml->m[order[j - 1]].ncap < ml->m[v].ncap) order[j] = order[j - 1], j--;
        order[j] = v;
    }
    nodes = 0;
    aborted = 0;
    if (n == 1) return 0;
    for (int depth = 1; depth <= budget.max_depth; depth++) {
        int alpha = -MATE - 1, best = -MATE - 1, best_at = -1;
        for (int k = 0; k < n; k++) {
            Move m = ml->m[order[k]];
            long clk = p->clock;
            make(p, &m);
            int score = -negamax(p, depth - 1, -MATE - 1, -alpha, 1);
            unmake(p, &m, clk);
            if (aborted) break;
            if (score > best) best = score, best_at = k;
            if (score > alpha) alpha = score;
        }
        if (best_at >= 0 && (!aborted || best_at > 0)) {
            /* a finished iteration, or an aborted one whose first move (the last best)
             * was searched and then beaten: its best move goes first */
            int v = order[best_at];
            memmove(order + 1, order, (size_t)best_at * sizeof *order);
            order[0] = v;
            best_index = v;
        } else if (!aborted || depth == 1) {
            best_index = order[0];
        }
        if (aborted) break;
        char sc[32], mv[MAXPATH * 4];
        print_score(sc, best);
        move_str(&ml->m[best_index], mv);
        double t = now_ms();
        out("info depth %d score %s nodes %lld time %lld pv %s", depth, sc, nodes,
            (long long)(t - start), mv);
        if (budget.soft_at > 0 && t >= budget.soft_at) break;
        if (best > MATE_BOUND || best < -MATE_BOUND) break; /* a forced result */
    }
    return best_index;
}

/* ------------------------------------------------------------------ */
/* Protocol                                                              */

static const Game *variant;
static Pos pos;
static int search_alphabeta; /* option Search: 0 greedy, 1 alphabeta */
/* A single-threaded bot cannot read `stop` while it searches: `go infinite`
 * in alphabeta mode searches this deep, then holds its answer for `stop`. */
#define INFINITE_DEPTH 5
static int pending_infinite; /* a `go infinite` waits for `stop` */
static char pending_move[MAXPATH * 4];

/* Sends the bestmove a `go infinite` holds back, if any: `stop`, and any
 * command that must end a search before it is carried out. */
static void implicit_stop(void)
{
    if (pending_infinite) {
        pending_infinite = 0;
        out("bestmove %s", pending_move);
    }
}

static char *read_line(void)
{
    static char *buf;
    static size_t cap;
    size_t n = 0;
    int ch;
    while ((ch = getchar()) != EOF && ch != '\n') {
        if (n + 2 > cap) {
            size_t nc = cap ? cap * 2 : 1024;
            char *b = realloc(buf, nc);
            if (!b) { fprintf(stderr, "out of memory\n"); exit(1); }
            buf = b;
            cap = nc;
        }
        buf[n++] = (char)ch;
    }
    if (ch == EOF && n == 0) return NULL;
    if (!buf) { buf = malloc(1); cap = 1; if (!buf) exit(1); }
    if (n && buf[n - 1] == '\r') n--;
    buf[n] = 0;
    return buf;
}

static int ieq(const char *a, const char *b)
{
    while (*a && tolower((unsigned char)*a) == tolower((unsigned char)*b)) a++, b++;
    return !*a && !*b;
}

static void echo_line(const char *prefix, const char *line)
{
    size_t n = strlen(line);
    if (n > ECHO_MAX) out("%s%.*s...", prefix, ECHO_MAX, line);
    else out("%s%s", prefix, line);
}

/* Move-string syntax: N-N or N(xN)+, decimal points without leading zero. */
static int well_formed_move(const char *s)
{
    int parts = 0;
    char sep = 0;
    for (;;) {
        if (*s < '1' || *s > '9') return 0;
        int len = 0;
        while (isdigit((unsigned char)*s)) s++, len++;
        if (len > 2) return 0;
        parts++;
        if (!*s) break;
        if (*s != '-' && *s != 'x') return 0;
        if (sep && *s != sep) return 0;
        sep = *s++;
    }
    if (parts < 2) return 0;
    return sep == 'x' || parts == 2;
}

static void cmd_position(char **t, int nt)
{
    char err[300];
    Pos q;
    memset(&q, 0, sizeof q);
    int i = 1;
    if (i < nt && strcmp(t[i], "startpos") == 0) {
        set_start(&q, variant);
        i++;
    } else if (i < nt && strcmp(t[i], "fen") == 0) {
        int j = ++i;
        while (j < nt && strcmp(t[j], "moves")) j++;
        if (set_fen(&q, variant, t + i, j - i, err, sizeof err)) {
            out("info string error %s (position unchanged)", err);
            return;
        }
        i = j;
    } else {
        out("info string error position needs 'startpos' or 'fen' (position unchanged)");
        return;
    }
    if (i < nt) {
        if (strcmp(t[i], "moves")) {
            out("info string error unexpected token '%.40s' in position command (position unchanged)", t[i]);
            pos_free(&q);
            return;
        }
        MoveList ml = {0};
        char s[MAXPATH * 4];
        for (int k = i + 1; k < nt; k++) {
            if (!well_formed_move(t[k])) {
                out("info string error malformed move '%.40s' (move %d of the list; position unchanged)", t[k], k - i);
                pos_free(&q);
                free(ml.m);
                return;
            }
            legal_moves(&q, &ml);
            int found = -1;
            for (int m = 0; m < ml.n && found < 0; m++) {
                move_str(&ml.m[m], s);
                if (strcmp(s, t[k]) == 0) found = m;
            }
            if (found < 0) {
                fen(&q, s);
                out("info string error illegal move '%.40s' (move %d of the list) in %s (position unchanged)", t[k], k - i, s);
                pos_free(&q);
                free(ml.m);
                return;
            }
            make(&q, &ml.m[found]);
        }
        free(ml.m);
    }
    implicit_stop(); /* only now: a rejected line leaves a held go infinite held */
    pos_free(&pos);
    pos = q;
}

#define GO_DIGITS 15  /* the longest number a `go` argument may have (protocol.md 5.6) */
#define PERFT_MAX 1000

/* A `go` value: 1 to GO_DIGITS decimal digits, after a '-' when `sign_ok` (the
 * times, where below 0 reads as 0). Only checked: the bot does not search. */
static int go_number(const char *s, int sign_ok)
{
    size_t n = 0;
    if (sign_ok && *s == '-') s++;
    for (; *s; s++, n++)
        if (!isdigit((unsigned char)*s)) return 0;
    return n >= 1 && n <= GO_DIGITS;
}

/* protocol.md 5.2 `go` and 5.6: a bare `go` is `go infinite`, `infinite` wins
 * over every limit, and one bad argument rejects the whole line (one error,
 * no bestmove, a held `go infinite` still held). */
static void cmd_go(char **t, int nt)
{
    static const char *numeric[] = {"p1time", "p2time", "p1inc", "p2inc", "movetime",
                                    "depth", "nodes", "movestogo", NULL};
    int infinite = nt == 1;
    long perft_depth = -1;
    long long value[8];
    for (int k = 0; k < 8; k++) value[k] = -1;
    for (int i = 1; i < nt; i++) {
        int num = -1;
        for (int k = 0; numeric[k] && num < 0; k++)
            if (strcmp(t[i], numeric[k]) == 0) num = k;
        if (num >= 0) {
            if (i + 1 >= nt || !go_number(t[i + 1], num < 4)) {
                out("info string error go %s needs a whole number of 1 to %d digits, got '%.40s'",
                    t[i], GO_DIGITS, i + 1 < nt ? t[i + 1] : "nothing");
                return;
            }
            value[num] = strtoll(t[i + 1], NULL, 10);
            if (value[num] < 0) value[num] = 0; /* a time below 0 reads as 0 */
            i++;
        } else if (strcmp(t[i], "infinite") == 0) {
            infinite = 1;
        } else if (strcmp(t[i], "perft") == 0) {
            if (i + 1 >= nt || !go_number(t[i + 1], 0) || parse_long(t[i + 1], &perft_depth)
                || perft_depth > PERFT_MAX) {
                out("info string error go perft needs a depth from 0 to %d, got '%.40s'",
                    PERFT_MAX, i + 1 < nt ? t[i + 1] : "nothing");
                return;
            }
            i++;
        } else {
            out("info string error unknown go argument '%.40s'", t[i]);
            return;
        }
    }
    double start = now_ms();
    implicit_stop(); /* a go during a held go infinite ends it first */
    if (perft_depth >= 0) {
        do_perft(&pos, (int)perft_depth);
        return;
    }
    MoveList ml = {0};
    legal_moves(&pos, &ml);
    if (ml.n == 0) {
        strcpy(pending_move, "none");
    } else if (search_alphabeta) {
        if (infinite) {
            plan_budget(-1, 0, -1, INFINITE_DEPTH, 0, start);
        } else {
            int white = pos.side == WHITE;
            long long depth = value[5] > 0 && value[5] < MAX_DEPTH ? value[5] : MAX_DEPTH;
            plan_budget(value[white ? 0 : 1], value[white ? 2 : 3], value[4], (long)depth,
                        value[6] > 0 ? value[6] : 0, start);
        }
        move_str(&ml.m[search_root(&pos, &ml, start)], pending_move);
    } else {
        move_str(&ml.m[choose(&ml)], pending_move);
    }
    free(ml.m);
    if (infinite && ml.n) pending_infinite = 1;
    else out("bestmove %s", pending_move);
}

static void cmd_setoption(char **t, int nt)
{
    char name[128] = "", value[128] = "";
    int i = 1;
    if (i >= nt || strcmp(t[i], "name")) {
        out("info string error setoption needs 'name <NAME> value <VALUE>'");
        return;
    }
    for (i++; i < nt && strcmp(t[i], "value"); i++) {
        if (strlen(name) + strlen(t[i]) + 2 > sizeof name) break;
        if (*name) strcat(name, " ");
        strcat(name, t[i]);
    }
    for (i++; i < nt; i++) {
        if (strlen(value) + strlen(t[i]) + 2 > sizeof value) break;
        if (*value) strcat(value, " ");
        strcat(value, t[i]);
    }
    if (ieq(name, "UGI_Variant")) {
        const Game *g = find_game(value);
        if (!g) {
            out("info string error UGI_Variant must be one of %s, got '%.40s'", game_names(), value);
            return;
        }
        implicit_stop();
        variant = g;
        set_start(&pos, variant); /* every setting, even to the same game, resets */
    } else if (ieq(name, "Search")) {
        if (ieq(value, "greedy")) search_alphabeta = 0;
        else if (ieq(value, "alphabeta")) search_alphabeta = 1;
        else out("info string error Search must be greedy or alphabeta, got '%.40s'", value);
    } else if (ieq(name, "Seed")) {
        long v;
        if (parse_long(value, &v) || v > 2147483647L) {
            out("info string error Seed must be an integer from 0 to 2147483647, got '%.40s'", value);
            return;
        }
        rng_state = (uint64_t)v;
    } else {
        out("info string error unknown option '%.60s'", name);
    }
}

static void cmd_query(char **t, int nt)
{
    MoveList ml = {0};
    if (nt != 2) {
        out("info string error query needs one of gameover, p1turn, result");
        return;
    }
    if (strcmp(t[1], "p1turn") == 0) {
        out("response %s", pos.side == WHITE ? "true" : "false");
    } else if (strcmp(t[1], "gameover") == 0) {
        out("response %s", outcome(&pos, &ml) != R_NONE ? "true" : "false");
    } else if (strcmp(t[1], "result") == 0) {
        static const char *names[] = {"none", "p1win", "p2win", "draw"};
        out("response %s", names[outcome(&pos, &ml)]);
    } else {
        out("info string error unknown query '%.40s' (gameover, p1turn, result)", t[1]);
    }
    free(ml.m);
}

static void cmd_d(void)
{
    char buf[512];
    int pt = 1;
    out("info string %s, %s to move", pos.g->name, pos.side == WHITE ? "White (p1)" : "Black (p2)");
    for (int row = 0; row < pos.g->nrows; row++) {
        char *s = buf;
        for (int i = 0; i < pos.g->rows[row]; i++, pt++)
            s += sprintf(s, " %2d:%c", pt, ".wb"[pos.cell[pt]]);
        out("info string%s", buf);
    }
    fen(&pos, buf);
    out("fen %s", buf);
    MoveList ml = {0};
    legal_moves(&pos, &ml);
    printf("legal");
    for (int i = 0; i < ml.n; i++) {
        move_str(&ml.m[i], buf);
        printf(" %s", buf);
    }
    out("%s", "");
    free(ml.m);
}

int main(void)
{
    char **tok = NULL;
    size_t tokcap = 0;
    init_games();
    variant = &GAMES[0];
    set_start(&pos, variant);
    for (char *line; (line = read_line()) != NULL;) {
        char *orig = malloc(strlen(line) + 1);
        if (!orig) return 1;
        strcpy(orig, line);
        int nt = 0;
        for (char *s = line; *s;) {
            while (*s == ' ' || *s == '\t') *s++ = 0;
            if (!*s) break;
            if ((size_t)nt == tokcap) {
                tokcap = tokcap ? tokcap * 2 : 64;
                char **nt2 = realloc(tok, tokcap * sizeof *tok);
                if (!nt2) return 1;
                tok = nt2;
            }
            tok[nt++] = s;
            while (*s && *s != ' ' && *s != '\t') s++;
        }
        if (nt == 0) { free(orig); continue; }
        const char *c = tok[0];
        if (strcmp(c, "ugi") == 0) {
            out("id name guti-greedy-c");
            out("id author guti project");
            char vars[256] = "";
            for (int g = 0; g < NGAMES; g++) strcat(strcat(vars, " var "), GAMES[g].name);
            out("option name UGI_Variant type combo default egara-guti%s", vars);
            out("option name Search type combo default greedy var greedy var alphabeta");
            out("option name Seed type spin default 1 min 0 max 2147483647");
            out("ugiok");
        } else if (strcmp(c, "isready") == 0) {
            out("readyok");
        } else if (strcmp(c, "setoption") == 0) {
            cmd_setoption(tok, nt);
        } else if (strcmp(c, "uginewgame") == 0) {
            implicit_stop();
            set_start(&pos, variant);
        } else if (strcmp(c, "position") == 0) {
            cmd_position(tok, nt);
        } else if (strcmp(c, "go") == 0) {
            cmd_go(tok, nt);
        } else if (strcmp(c, "stop") == 0) {
            implicit_stop();
        } else if (strcmp(c, "query") == 0) {
            cmd_query(tok, nt);
        } else if (strcmp(c, "d") == 0) {
            cmd_d();
        } else if (strcmp(c, "quit") == 0) {
            free(orig);
            break;
        } else {
            echo_line("info string unknown command ", orig);
        }
        free(orig);
    }
    pos_free(&pos);
    free(tok);
    return 0;
}
