import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * guti random bot (Java 17): a small UGI engine for Egara-guti and Pretwa that plays a
 * uniformly random legal move. The randomness comes from the {@code Seed} option, so a given
 * command sequence always produces the same answers.
 *
 * <p>Rules follow protocol.md section 3: compulsory capture, maximal multi-jumps (every distinct
 * landing path is its own move), and the four end rules in order (Pretwa "three or fewer", no
 * legal move, 50-ply clock, threefold repetition counted from the {@code position} base).
 */
public final class Bot {
    static final int EMPTY = 0, WHITE = 1, BLACK = 2;
    static final int R_NONE = 0, R_WHITE = 1, R_BLACK = 2, R_DRAW = 3;

    /** Board geometry of one game; adjacency and jumps are derived from its straight lines. */
    static final class Game {
        final String name;
        final int npoints;
        final int[] rows;
        final String startFen;
        final boolean threeOrFewer;
        final int[][] nb;
        final int[][] jumpOver;
        final int[][] jumpTo;

        Game(String name, int[] rows, String startFen, boolean threeOrFewer, int[][] lines) {
            this.name = name;
            this.rows = rows;
            this.npoints = Arrays.stream(rows).sum();
            this.startFen = startFen;
            this.threeOrFewer = threeOrFewer;
            List<List<Integer>> n = new ArrayList<>();
            List<List<int[]>> j = new ArrayList<>();
            for (int i = 0; i <= npoints; i++) {
                n.add(new ArrayList<>());
                j.add(new ArrayList<>());
            }
            for (int[] l : lines) {
                for (int i = 0; i + 1 < l.length; i++) {
                    addEdge(n, l[i], l[i + 1]);
                    addEdge(n, l[i + 1], l[i]);
                }
                for (int i = 0; i + 2 < l.length; i++) {
                    addJump(j, l[i], l[i + 1], l[i + 2]);
                    addJump(j, l[i + 2], l[i + 1], l[i]);
                }
            }
            nb = new int[npoints + 1][];
            jumpOver = new int[npoints + 1][];
            jumpTo = new int[npoints + 1][];
            for (int p = 0; p <= npoints; p++) {
                nb[p] = n.get(p).stream().mapToInt(Integer::intValue).toArray();
                jumpOver[p] = j.get(p).stream().mapToInt(a -> a[0]).toArray();
                jumpTo[p] = j.get(p).stream().mapToInt(a -> a[1]).toArray();
            }
        }

        private static void addEdge(List<List<Integer>> n, int a, int b) {
            if (!n.get(a).contains(b)) n.get(a).add(b);
        }

        private static void addJump(List<List<int[]>> j, int a, int over, int to) {
            for (int[] x : j.get(a)) if (x[0] == over && x[1] == to) return;
            j.get(a).add(new int[] {over, to});
        }

        static Game egaraGuti() {
            int[][] lines = {
                {1, 2, 3, 4, 5}, {6, 7, 8}, {9, 10, 11}, {13, 14, 15}, {16, 17, 18},
                {19, 20, 21, 22, 23}, {1, 6, 9, 12, 15, 18, 23}, {5, 8, 11, 12, 13, 16, 19},
                {3, 7, 10, 12, 14, 17, 21}, {2, 6, 16, 20}, {4, 8, 18, 22},
            };
            return new Game("egara-guti", new int[] {5, 3, 3, 1, 3, 3, 5},
                    "bbbbb/bbb/bbb/1/www/www/wwwww w 0 1", false, lines);
        }

        static Game pretwa() {
            List<int[]> lines = new ArrayList<>();
            for (int base = 2; base <= 14; base += 6) {
                int[] c = new int[8]; // closed circle: first two points repeated at the end
                for (int i = 0; i < 8; i++) c[i] = base + i % 6;
                lines.add(c);
            }
            for (int r = 0; r < 3; r++) {
                lines.add(new int[] {17 + r, 11 + r, 5 + r, 1, 2 + r, 8 + r, 14 + r});
            }
            return new Game("pretwa", new int[] {1, 6, 6, 6}, "1/bbwwwb/bbwwwb/bbwwwb w 0 1", true,
                    lines.toArray(new int[0][]));
        }
    }

    /** A step (path of two points, no captures) or a capture sequence. */
    record Move(int[] path, int[] captured) {
        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < path.length; i++) {
                if (i > 0) sb.append(captured.length > 0 ? 'x' : '-');
                sb.append(path[i]);
            }
            return sb.toString();
        }
    }

    /** Thrown for a bad FEN; the message says what is wrong and where. */
    static final class FenException extends Exception {
        private static final long serialVersionUID = 1L;

        FenException(String msg) {
            super(msg);
        }
    }

    /** A position plus the keys of every position since the base (for repetition). */
    static final class Pos {
        final Game g;
        final int[] cell;
        int side;
        long clock;
        long fullmove;
        long[] hist = new long[64];
        int nhist;

        Pos(Game g) {
            this.g = g;
            this.cell = new int[g.npoints + 1];
        }

        static Pos fromFen(Game g, List<String> f) throws FenException {
            if (f.size() < 2 || f.size() > 4) {
                throw new FenException("FEN needs 2 to 4 fields (CELLS SIDE [CLOCK [MOVE]]), got "
                        + f.size());
            }
            Pos p = new Pos(g);
            String cells = f.get(0);
            String[] rows = cells.split("/", -1);
            if (rows.length != g.rows.length) {
                throw new FenException("bad FEN cells '" + clip(cells) + "': " + g.name + " has "
                        + g.rows.length + " rows, got " + rows.length);
            }
            int pt = 1;
            for (int r = 0; r < rows.length; r++) {
                String row = rows[r];
                int filled = 0;
                int i = 0;
                while (i < row.length()) {
                    char c = row.charAt(i);
                    if (c == 'w' || c == 'b') {
                        if (filled == g.rows[r]) throw tooLong(cells, r);
                        p.cell[pt++] = c == 'w' ? WHITE : BLACK;
                        filled++;
                        i++;
                    } else if (c >= '1' && c <= '9') {
                        int j = i;
                        while (j < row.length() && row.charAt(j) >= '0' && row.charAt(j) <= '9' && j - i < 4) j++;
                        int n = Integer.parseInt(row.substring(i, j));
                        if (filled + n > g.rows[r]) {
                            throw new FenException("bad FEN cells '" + clip(cells) + "': empty count "
                                    + n + " runs past the end of row " + (r + 1));
                        }
                        pt += n; // cells are already EMPTY
                        filled += n;
                        i = j;
                    } else if (c == '0') {
                        throw new FenException("bad FEN cells '" + clip(cells) + "': empty count in row "
                                + (r + 1) + " is 0 or has a leading zero");
                    } else {
                        throw new FenException("bad FEN cells '" + clip(cells)
                                + "': unexpected character '" + c + "' in row " + (r + 1));
                    }
                }
                if (filled != g.rows[r]) {
                    throw new FenException("bad FEN cells '" + clip(cells) + "': row " + (r + 1)
                            + " has " + filled + " points, needs " + g.rows[r]);
                }
            }
            String side = f.get(1);
            if (!side.equals("w") && !side.equals("b")) {
                throw new FenException("bad FEN side '" + clip(side) + "': must be w or b");
            }
            p.side = side.equals("w") ? WHITE : BLACK;
            p.clock = 0;
            p.fullmove = 1;
            if (f.size() >= 3) {
                p.clock = fenNumber(f.get(2));
                if (p.clock < 0) {
                    throw new FenException("bad FEN clock '" + clip(f.get(2))
                            + "': must be 0 to 999999999, no leading zero");
                }
            }
            if (f.size() >= 4) {
                p.fullmove = fenNumber(f.get(3));
                if (p.fullmove < 1) {
                    throw new FenException("bad FEN move number '" + clip(f.get(3))
                            + "': must be 1 to 999999999, no leading zero");
                }
            }
            p.pushKey();
            return p;
        }

        private static FenException tooLong(String cells, int r) {
            return new FenException("bad FEN cells '" + clip(cells) + "': row " + (r + 1)
                    + " is too long");
        }

        static Pos start(Game g) {
            try {
                return fromFen(g, Arrays.asList(g.startFen.split(" ")));
            } catch (FenException e) {
                throw new IllegalStateException(e);
            }
        }

        String fen() {
            StringBuilder sb = new StringBuilder();
            int pt = 1;
            for (int r = 0; r < g.rows.length; r++) {
                if (r > 0) sb.append('/');
                int empty = 0;
                for (int i = 0; i < g.rows[r]; i++, pt++) {
                    if (cell[pt] == EMPTY) {
                        empty++;
                        continue;
                    }
                    if (empty > 0) sb.append(empty);
                    empty = 0;
                    sb.append(cell[pt] == WHITE ? 'w' : 'b');
                }
                if (empty > 0) sb.append(empty);
            }
            return sb + " " + (side == WHITE ? 'w' : 'b') + " " + clock + " " + fullmove;
        }

        /** Exact key: two bits per point plus the side to move. */
        long key() {
            long k = side == BLACK ? 1 : 0;
            for (int i = 1; i <= g.npoints; i++) k = (k << 2) | cell[i];
            return k;
        }

        void pushKey() {
            if (nhist == hist.length) hist = Arrays.copyOf(hist, nhist * 2);
            hist[nhist++] = key();
        }

        int count(int who) {
            int n = 0;
            for (int i = 1; i <= g.npoints; i++) if (cell[i] == who) n++;
            return n;
        }

        /** Moves by the movement rules alone (end rules not applied). */
        List<Move> rawMoves() {
            List<Move> out = new ArrayList<>();
            int[] path = new int[g.npoints + 2];
            int[] cap = new int[g.npoints + 2];
            for (int a = 1; a <= g.npoints; a++) {
                if (cell[a] != side) continue;
                cell[a] = EMPTY; // lifted: the path may come back to its start
                path[0] = a;
                jumps(a, path, 1, cap, 0, out);
                cell[a] = side;
            }
            if (!out.isEmpty()) return out;
            for (int a = 1; a <= g.npoints; a++) {
                if (cell[a] != side) continue;
                for (int b : g.nb[a]) {
                    if (cell[b] == EMPTY) out.add(new Move(new int[] {a, b}, new int[0]));
                }
            }
            return out;
        }

        private void jumps(int at, int[] path, int np, int[] cap, int nc, List<Move> out) {
            int enemy = 3 - side;
            boolean extended = false;
            for (int j = 0; j < g.jumpOver[at].length; j++) {
                int over = g.jumpOver[at][j];
                int to = g.jumpTo[at][j];
                if (cell[over] != enemy || cell[to] != EMPTY) continue;
                extended = true;
                cell[over] = EMPTY;
                path[np] = to;
                cap[nc] = over;
                jumps(to, path, np + 1, cap, nc + 1, out);
                cell[over] = enemy;
            }
            if (!extended && np > 1) {
                out.add(new Move(Arrays.copyOf(path, np), Arrays.copyOf(cap, nc)));
            }
        }

        /** Third occurrence of the current position? Only plies since the last capture matter. */
        boolean isRepetition() {
            long k = hist[nhist - 1];
            long lo = Math.max(0, nhist - 1 - clock);
            int seen = 1;
            for (int i = nhist - 3; i >= lo; i -= 2) {
                if (hist[i] == k && ++seen >= 3) return true;
            }
            return false;
        }

        int scoreByCount() {
            int w = count(WHITE);
            int b = count(BLACK);
            return w > b ? R_WHITE : b > w ? R_BLACK : R_DRAW;
        }

        /** End rules 1-4 of protocol.md, checked in order. */
        int outcome() {
            if (g.threeOrFewer) {
                int w = count(WHITE);
                int b = count(BLACK);
                if (w <= 3 && b > 3) return R_BLACK;
                if (b <= 3 && w > 3) return R_WHITE;
            }
            if (rawMoves().isEmpty()) return side == WHITE ? R_BLACK : R_WHITE;
            if (clock >= 50 || isRepetition()) return scoreByCount();
            return R_NONE;
        }

        List<Move> legalMoves() {
            if (g.threeOrFewer) {
                int w = count(WHITE);
                int b = count(BLACK);
                if ((w <= 3 && b > 3) || (b <= 3 && w > 3)) return List.of();
            }
            List<Move> raw = rawMoves();
            if (raw.isEmpty() || clock >= 50 || isRepetition()) return List.of();
            return raw;
        }

        void make(Move m) {
            int me = side;
            cell[m.path()[0]] = EMPTY;
            for (int c : m.captured()) cell[c] = EMPTY;
            cell[m.path()[m.path().length - 1]] = me;
            clock = m.captured().length > 0 ? 0 : clock + 1;
            if (me == BLACK) fullmove++;
            side = 3 - me;
            pushKey();
        }

        void unmake(Move m, long oldClock) {
            nhist--;
            side = 3 - side;
            int me = side;
            if (me == BLACK) fullmove--;
            clock = oldClock;
            cell[m.path()[m.path().length - 1]] = EMPTY;
            for (int c : m.captured()) cell[c] = 3 - me;
            cell[m.path()[0]] = me;
        }

        long perft(int depth) {
            if (depth == 0) return 1;
            List<Move> moves = legalMoves();
            if (depth == 1) return moves.size();
            long n = 0;
            for (Move m : moves) {
                long clk = clock;
                make(m);
                n += perft(depth - 1);
                unmake(m, clk);
            }
            return n;
        }
    }

    static String clip(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "..." : s;
    }

    /** Non-negative decimal (digits only, bounded), or -1. */
    static long parseCount(String s) {
        if (s.isEmpty() || s.length() > 9) return -1;
        for (int i = 0; i < s.length(); i++) if (s.charAt(i) < '0' || s.charAt(i) > '9') return -1;
        return Long.parseLong(s);
    }

    /** FEN CLOCK or MOVE (protocol.md 5.6): 0 to 999999999, no leading zero; else -1. */
    static long fenNumber(String s) {
        return s.length() > 1 && s.charAt(0) == '0' ? -1 : parseCount(s);
    }

    /** Move-string syntax: N-N or N(xN)+, points without leading zeros. */
    static boolean wellFormedMove(String s) {
        int parts = 0;
        char sep = 0;
        int i = 0;
        while (true) {
            if (i >= s.length() || s.charAt(i) < '1' || s.charAt(i) > '9') return false;
            int j = i;
            while (j < s.length() && s.charAt(j) >= '0' && s.charAt(j) <= '9') j++;
            if (j - i > 2) return false;
            parts++;
            if (j == s.length()) break;
            char c = s.charAt(j);
            if ((c != '-' && c != 'x') || (sep != 0 && c != sep)) return false;
            sep = c;
            i = j + 1;
        }
        return parts >= 2 && (sep == 'x' || parts == 2);
    }

    // ------------------------------------------------------------------ protocol

    private final PrintStream out;
    private final Game[] games = {Game.egaraGuti(), Game.pretwa()};
    private Game variant = games[0];
    private Pos pos = Pos.start(variant);
    private Random rng = new Random(1);
    private String pendingMove; // a `go infinite` waits for `stop`

    Bot(PrintStream out) {
        this.out = out;
    }

    private void say(String line) {
        out.print(line + "\n");
        out.flush();
    }

    /** Handles one input line; returns false on quit. */
    boolean handle(String line) {
        String[] t = line.trim().split("[ \t]+");
        if (t.length == 0 || t[0].isEmpty()) return true;
        switch (t[0]) {
            case "ugi" -> {
                say("id name guti-random-java");
                say("id author guti project");
                say("option name UGI_Variant type combo default egara-guti var egara-guti var pretwa");
                say("option name Seed type spin default 1 min 0 max 2147483647");
                say("ugiok");
            }
            case "isready" -> say("readyok");
            case "setoption" -> setOption(t);
            case "uginewgame" -> {
                implicitStop();
                pos = Pos.start(variant);
            }
            case "position" -> position(t);
            case "go" -> go(t);
            case "stop" -> implicitStop();
            case "query" -> query(t);
            case "d" -> display();
            case "quit" -> {
                return false;
            }
            default -> say("info string unknown command " + (line.length() > 200
                    ? line.substring(0, 200) + "..." : line));
        }
        return true;
    }

    private void setOption(String[] t) {
        if (t.length < 2 || !t[1].equals("name")) {
            say("info string error setoption needs 'name <NAME> value <VALUE>'");
            return;
        }
        int i = 2;
        StringBuilder name = new StringBuilder();
        for (; i < t.length && !t[i].equals("value"); i++) {
            if (name.length() > 0) name.append(' ');
            name.append(t[i]);
        }
        String value = String.join(" ", Arrays.copyOfRange(t, Math.min(i + 1, t.length), t.length));
        String n = name.toString();
        if (n.equalsIgnoreCase("UGI_Variant")) {
            for (Game g : games) {
                if (g.name.equalsIgnoreCase(value)) {
                    implicitStop();
                    variant = g;
                    pos = Pos.start(g); // every setting, even to the same game, resets
                    return;
                }
            }
            say("info string error UGI_Variant must be egara-guti or pretwa, got '" + clip(value) + "'");
        } else if (n.equalsIgnoreCase("Seed")) {
            long v = value.matches("[0-9]{1,10}") ? Long.parseLong(value) : -1;
            if (v < 0 || v > Integer.MAX_VALUE) {
                say("info string error Seed must be an integer from 0 to 2147483647, got '"
                        + clip(value) + "'");
                return;
            }
            rng = new Random(v);
        } else {
            say("info string error unknown option '" + clip(n) + "'");
        }
    }

    private void position(String[] t) {
        Pos q;
        int i = 1;
        if (i < t.length && t[i].equals("startpos")) {
            q = Pos.start(variant);
            i++;
        } else if (i < t.length && t[i].equals("fen")) {
            int j = ++i;
            while (j < t.length && !t[j].equals("moves")) j++;
            try {
                q = Pos.fromFen(variant, Arrays.asList(t).subList(i, j));
            } catch (FenException e) {
                say("info string error " + e.getMessage() + " (position unchanged)");
                return;
            }
            i = j;
        } else {
            say("info string error position needs 'startpos' or 'fen' (position unchanged)");
            return;
        }
        if (i < t.length) {
            if (!t[i].equals("moves")) {
                say("info string error unexpected token '" + clip(t[i])
                        + "' in position command (position unchanged)");
                return;
            }
            for (int k = i + 1; k < t.length; k++) {
                if (!wellFormedMove(t[k])) {
                    say("info string error malformed move '" + clip(t[k]) + "' (move " + (k - i)
                            + " of the list; position unchanged)");
                    return;
                }
                Move found = null;
                for (Move m : q.legalMoves()) {
                    if (m.toString().equals(t[k])) found = m;
                }
                if (found == null) {
                    say("info string error illegal move '" + clip(t[k]) + "' (move " + (k - i)
                            + " of the list) in " + q.fen() + " (position unchanged)");
                    return;
                }
                q.make(found);
            }
        }
        implicitStop(); // only now: a rejected line leaves a held go infinite held
        pos = q;
    }

    static final int GO_DIGITS = 15; // the longest number a `go` argument may have (protocol.md 5.6)
    static final int PERFT_MAX = 1000;
    static final List<String> GO_TIMES = List.of("p1time", "p2time", "p1inc", "p2inc");
    static final List<String> GO_OTHER_NUMBERS = List.of("movetime", "depth", "nodes", "movestogo");

    /** A `go` value: 1 to GO_DIGITS digits, after a '-' for the times (below 0 reads as 0). */
    static boolean goNumber(String s, boolean signOk) {
        String digits = signOk && s.startsWith("-") ? s.substring(1) : s;
        return digits.matches("[0-9]{1," + GO_DIGITS + "}");
    }

    /** Sends the bestmove a `go infinite` holds back, if any: `stop`, and any command that
     *  must end a search before it is carried out. */
    private void implicitStop() {
        if (pendingMove != null) {
            say("bestmove " + pendingMove);
            pendingMove = null;
        }
    }

    /** protocol.md 5.2 `go` and 5.6: a bare `go` is `go infinite`, `infinite` wins over every
     *  limit, and one bad argument rejects the whole line (one error, no bestmove, a held
     *  `go infinite` still held). The bot does not search: the limits are only checked. */
    private void go(String[] t) {
        boolean infinite = t.length == 1;
        long perftDepth = -1;
        for (int i = 1; i < t.length; i++) {
            boolean time = GO_TIMES.contains(t[i]);
            if (time || GO_OTHER_NUMBERS.contains(t[i])) {
                if (i + 1 >= t.length || !goNumber(t[i + 1], time)) {
                    say("info string error go " + t[i] + " needs a whole number of 1 to " + GO_DIGITS
                            + " digits, got '" + (i + 1 < t.length ? clip(t[i + 1]) : "nothing") + "'");
                    return;
                }
                i++;
            } else if (t[i].equals("infinite")) {
                infinite = true;
            } else if (t[i].equals("perft")) {
                perftDepth = i + 1 < t.length ? parseCount(t[i + 1]) : -1;
                if (perftDepth < 0 || perftDepth > PERFT_MAX) {
                    say("info string error go perft needs a depth from 0 to " + PERFT_MAX + ", got '"
                            + (i + 1 < t.length ? clip(t[i + 1]) : "nothing") + "'");
                    return;
                }
                i++;
            } else {
                say("info string error unknown go argument '" + clip(t[i]) + "'");
                return;
            }
        }
        implicitStop(); // a go during a held go infinite ends it first
        if (perftDepth >= 0) {
            perft((int) perftDepth);
            return;
        }
        List<Move> moves = pos.legalMoves();
        String best = moves.isEmpty() ? "none" : moves.get(rng.nextInt(moves.size())).toString();
        if (infinite && !moves.isEmpty()) pendingMove = best;
        else say("bestmove " + best);
    }

    private void perft(int depth) {
        if (depth == 0) {
            say("nodes 1");
            return;
        }
        List<String[]> lines = new ArrayList<>();
        long total = 0;
        for (Move m : pos.legalMoves()) {
            long clk = pos.clock;
            pos.make(m);
            long n = pos.perft(depth - 1);
            pos.unmake(m, clk);
            total += n;
            lines.add(new String[] {m.toString(), Long.toString(n)});
        }
        lines.sort((a, b) -> a[0].compareTo(b[0])); // ASCII strings: UTF-16 order = byte order
        StringBuilder sb = new StringBuilder();
        for (String[] l : lines) sb.append(l[0]).append(": ").append(l[1]).append('\n');
        out.print(sb);
        say("nodes " + total);
    }

    private void query(String[] t) {
        if (t.length != 2) {
            say("info string error query needs one of gameover, p1turn, result");
            return;
        }
        switch (t[1]) {
            case "p1turn" -> say("response " + (pos.side == WHITE));
            case "gameover" -> say("response " + (pos.outcome() != R_NONE));
            case "result" -> say("response "
                    + new String[] {"none", "p1win", "p2win", "draw"}[pos.outcome()]);
            default -> say("info string error unknown query '" + clip(t[1])
                    + "' (gameover, p1turn, result)");
        }
    }

    private void display() {
        say("info string " + pos.g.name + ", " + (pos.side == WHITE ? "White (p1)" : "Black (p2)")
                + " to move");
        int pt = 1;
        for (int r = 0; r < pos.g.rows.length; r++) {
            StringBuilder sb = new StringBuilder("info string");
            for (int i = 0; i < pos.g.rows[r]; i++, pt++) {
                sb.append(String.format(Locale.ROOT, " %2d:%c", pt, ".wb".charAt(pos.cell[pt])));
            }
            say(sb.toString());
        }
        say("fen " + pos.fen());
        StringBuilder sb = new StringBuilder("legal");
        for (Move m : pos.legalMoves()) sb.append(' ').append(m);
        say(sb.toString());
    }

    public static void main(String[] args) throws IOException {
        PrintStream ps = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Bot bot = new Bot(ps);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            if (!bot.handle(line)) break;
        }
        ps.flush();
    }
}
