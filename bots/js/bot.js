#!/usr/bin/env node
// guti greedy bot (Node.js 20, no packages): a small UGI engine for
// Egara-guti and Pretwa.
//
// Strategy: among the legal moves, a capture that takes the most pieces
// (ties at random); when there is no capture, a random step. Random choices
// come from mulberry32 seeded by the `Seed` option (reseeded at each
// `uginewgame`), so a given command sequence always gives the same answers.
// Seed 0 (the default) seeds from the clock.
//
// Rules follow protocol.md section 3, written from scratch: compulsory
// capture, maximal multi-jumps (each distinct landing path is its own move),
// the four end rules in order (Pretwa "three or fewer", no legal move,
// 50-ply clock, threefold repetition counted from the `position` base) and
// strict FEN parsing.
'use strict';

const EMPTY = '.';
const WHITE = 'w';
const BLACK = 'b';
const OTHER = { w: BLACK, b: WHITE };
const ECHO_MAX = 200; // how much of a bad line is echoed back
const SEED_MAX = 2147483647;

// ---------------------------------------------------------------- geometry
// Each game is stated as its straight lines (open) and circles (closed);
// adjacency and jumps are derived from them.

function range(a, b) {
  const out = [];
  for (let i = a; i < b; i++) out.push(i);
  return out;
}

function makeGame(name, rows, lines, circles, startFen, threeOrFewer) {
  const size = rows.reduce((s, r) => s + r, 0);
  const nbrs = range(0, size + 1).map(() => []);
  const jumps = range(0, size + 1).map(() => []);
  const triples = [];
  for (const line of lines) {
    for (let i = 0; i + 1 < line.length; i++) {
      nbrs[line[i]].push(line[i + 1]);
      nbrs[line[i + 1]].push(line[i]);
      if (i + 2 < line.length) triples.push([line[i], line[i + 1], line[i + 2]]);
    }
  }
  for (const c of circles) {
    const n = c.length;
    for (let i = 0; i < n; i++) {
      nbrs[c[i]].push(c[(i + 1) % n]);
      nbrs[c[(i + 1) % n]].push(c[i]);
      triples.push([c[i], c[(i + 1) % n], c[(i + 2) % n]]);
    }
  }
  for (const [a, b, c] of triples) {
    jumps[a].push([b, c]);
    jumps[c].push([b, a]);
  }
  return { name, rows, size, nbrs, jumps, startFen, threeOrFewer };
}

const INNER = range(2, 8);
const MIDDLE = range(8, 14);
const OUTER = range(14, 20);

const GAMES = {
  'egara-guti': makeGame(
    'egara-guti',
    [5, 3, 3, 1, 3, 3, 5],
    [
      [1, 2, 3, 4, 5], [6, 7, 8], [9, 10, 11], [13, 14, 15], [16, 17, 18],
      [19, 20, 21, 22, 23],
      [1, 6, 9, 12, 15, 18, 23], [5, 8, 11, 12, 13, 16, 19],
      [3, 7, 10, 12, 14, 17, 21],
      [2, 6, 16, 20], [4, 8, 18, 22],
    ],
    [],
    'bbbbb/bbb/bbb/1/www/www/wwwww w 0 1',
    false,
  ),
  pretwa: makeGame(
    'pretwa',
    [1, 6, 6, 6],
    [0, 1, 2].map((r) => [OUTER[r + 3], MIDDLE[r + 3], INNER[r + 3], 1, INNER[r], MIDDLE[r], OUTER[r]]),
    [INNER, MIDDLE, OUTER],
    '1/bbwwwb/bbwwwb/bbwwwb w 0 1',
    true,
  ),
};

// ---------------------------------------------------------------- position

class RulesError extends Error {}

function moveString(m) {
  return m.path.join(m.captured.length ? 'x' : '-');
}

function byteOrder(a, b) {
  // move strings are ASCII, so UTF-16 code-unit order is byte order
  return a < b ? -1 : a > b ? 1 : 0;
}

function countsOf(cells) {
  let w = 0;
  let b = 0;
  for (const c of cells) {
    if (c === WHITE) w++;
    else if (c === BLACK) b++;
  }
  return [w, b];
}

function byCount(w, b) {
  return w > b ? 'p1win' : b > w ? 'p2win' : 'draw';
}

class Position {
  // cells[0] unused; history (counts) starts at this position, which counts once.
  constructor(game, cells, side, clock, fullmove) {
    this.game = game;
    this.cells = cells;
    this.side = side;
    this.clock = clock;
    this.fullmove = fullmove;
    this.counts = new Map([[this.key(), 1]]);
    this.undo = [];
  }

  static start(game) {
    return Position.fromFen(game, game.startFen);
  }

  static fromFen(game, text) {
    const fields = text.split(/[ \t]+/).filter((f) => f.length);
    const q = JSON.stringify(text);
    if (fields.length < 2 || fields.length > 4) {
      throw new RulesError(`FEN ${q}: expected 2 to 4 fields, got ${fields.length}`);
    }
    const rows = fields[0].split('/');
    if (rows.length !== game.rows.length) {
      throw new RulesError(`FEN ${q}: ${game.name} needs ${game.rows.length} rows, got ${rows.length}`);
    }
    const cells = [' '];
    rows.forEach((row, i) => {
      const want = game.rows[i];
      let n = 0;
      for (const tok of row.match(/[0-9]+|./g) || []) {
        if (tok === WHITE || tok === BLACK) {
          cells.push(tok);
          n++;
        } else if (/^[1-9][0-9]*$/.test(tok) && n + Number(tok) <= want) {
          for (let k = 0; k < Number(tok); k++) cells.push(EMPTY);
          n += Number(tok);
        } else if (/^[0-9]/.test(tok)) {
          throw new RulesError(`FEN ${q}: row ${i + 1}: bad empty count '${tok}'`);
        } else {
          throw new RulesError(`FEN ${q}: row ${i + 1}: unexpected character '${tok}'`);
        }
        if (n > want) throw new RulesError(`FEN ${q}: row ${i + 1} holds more than ${want} points`);
      }
      if (n !== want) throw new RulesError(`FEN ${q}: row ${i + 1} holds ${n} points, needs ${want}`);
    });
    const side = fields[1];
    if (side !== WHITE && side !== BLACK) {
      throw new RulesError(`FEN ${q}: side to move must be 'w' or 'b', got '${side}'`);
    }
    let clock = 0;
    let fullmove = 1;
    // CLOCK and MOVE: no leading zero, at most 999,999,999 (protocol.md 5.6).
    const fenNumber = /^(0|[1-9][0-9]{0,8})$/;
    if (fields.length >= 3) {
      if (!fenNumber.test(fields[2])) {
        throw new RulesError(`FEN ${q}: clock must be 0 to 999999999 without leading zeros, got '${fields[2]}'`);
      }
      clock = Number(fields[2]);
    }
    if (fields.length === 4) {
      if (!fenNumber.test(fields[3]) || Number(fields[3]) < 1) {
        throw new RulesError(`FEN ${q}: move number must be 1 to 999999999 without leading zeros, got '${fields[3]}'`);
      }
      fullmove = Number(fields[3]);
    }
    return new Position(game, cells, side, clock, fullmove);
  }

  fen() {
    const out = [];
    let i = 1;
    for (const width of this.game.rows) {
      let row = '';
      let empty = 0;
      for (let p = i; p < i + width; p++) {
        if (this.cells[p] === EMPTY) empty++;
        else {
          row += (empty ? String(empty) : '') + this.cells[p];
          empty = 0;
        }
      }
      out.push(row + (empty ? String(empty) : ''));
      i += width;
    }
    return `${out.join('/')} ${this.side} ${this.clock} ${this.fullmove}`;
  }

  key() {
    return this.cells.join('') + this.side;
  }

  // All maximal captures if any jump exists, else all steps; end rules ignored.
  pseudoMoves() {
    const { cells, side } = this;
    const captures = [];
    const mine = [];
    for (let p = 1; p < cells.length; p++) if (cells[p] === side) mine.push(p);
    for (const p of mine) this.capturesFrom(p, captures);
    if (captures.length) return captures;
    const steps = [];
    for (const p of mine) {
      for (const q of this.game.nbrs[p]) if (cells[q] === EMPTY) steps.push({ path: [p, q], captured: [] });
    }
    return steps;
  }

  capturesFrom(start, out) {
    const { cells } = this;
    const jumps = this.game.jumps;
    const me = this.side;
    const opp = OTHER[me];
    const path = [start];
    const taken = [];
    cells[start] = EMPTY; // the piece has left; it may land here again
    const extend = (at) => {
      let wentOn = false;
      for (const [over, to] of jumps[at]) {
        if (cells[over] === opp && cells[to] === EMPTY) {
          wentOn = true;
          cells[over] = EMPTY; // jumped pieces leave at once
          path.push(to);
          taken.push(over);
          extend(to);
          path.pop();
          taken.pop();
          cells[over] = opp;
        }
      }
      if (!wentOn && taken.length) out.push({ path: path.slice(), captured: taken.slice() });
    };
    extend(start);
    cells[start] = me;
  }

  legalMoves() {
    const moves = this.pseudoMoves();
    if (this.outcome(moves)) return [];
    return moves.map((m) => [moveString(m), m]).sort((a, b) => byteOrder(a[0], b[0])).map((x) => x[1]);
  }

  // [result, reason] by the four end rules in order, or null.
  outcome(moves) {
    const [w, b] = countsOf(this.cells);
    if (this.game.threeOrFewer) {
      if (w <= 3 && b > 3) return ['p2win', 'three or fewer'];
      if (b <= 3 && w > 3) return ['p1win', 'three or fewer'];
    }
    if (moves === undefined) moves = this.pseudoMoves();
    if (!moves.length) return [this.side === WHITE ? 'p2win' : 'p1win', 'no legal move'];
    if (this.clock >= 50) return [byCount(w, b), 'fifty plies'];
    if ((this.counts.get(this.key()) || 0) >= 3) return [byCount(w, b), 'repetition'];
    return null;
  }

  parseMove(text) {
    if (!/^[1-9][0-9]*(-[1-9][0-9]*|(x[1-9][0-9]*)+)$/.test(text)) {
      throw new RulesError(`malformed move '${text}'`);
    }
    for (const m of this.legalMoves()) if (moveString(m) === text) return m;
    throw new RulesError(`illegal move '${text}' in position ${this.fen()}`);
  }

  push(m) {
    const { cells } = this;
    const me = this.side;
    this.undo.push([m, this.clock, this.fullmove]);
    cells[m.path[0]] = EMPTY;
    for (const p of m.captured) cells[p] = EMPTY;
    cells[m.path[m.path.length - 1]] = me;
    this.clock = m.captured.length ? 0 : this.clock + 1;
    if (me === BLACK) this.fullmove++;
    this.side = OTHER[me];
    const k = this.key();
    this.counts.set(k, (this.counts.get(k) || 0) + 1);
  }

  pop() {
    const k = this.key();
    const n = this.counts.get(k) - 1;
    if (n) this.counts.set(k, n);
    else this.counts.delete(k);
    const [m, clock, fullmove] = this.undo.pop();
    this.clock = clock;
    this.fullmove = fullmove;
    const me = (this.side = OTHER[this.side]);
    this.cells[m.path[m.path.length - 1]] = EMPTY;
    this.cells[m.path[0]] = me;
    for (const p of m.captured) this.cells[p] = OTHER[me];
    return m;
  }
}

function perft(pos, depth) {
  if (depth === 0) return 1;
  const moves = pos.legalMoves();
  if (depth === 1) return moves.length;
  let total = 0;
  for (const m of moves) {
    pos.push(m);
    total += perft(pos, depth - 1);
    pos.pop();
  }
  return total;
}

// ---------------------------------------------------------------- strategy

// mulberry32: a tiny 32-bit seeded PRNG; returns floats in [0, 1).
function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function chooseGreedy(moves, rand) {
  const most = Math.max(...moves.map((m) => m.captured.length));
  const best = moves.filter((m) => m.captured.length === most);
  return best[Math.floor(rand() * best.length)];
}

// ---------------------------------------------------------------- protocol

const GO_TIMES = new Set(['p1time', 'p2time', 'p1inc', 'p2inc']); // below 0 reads as 0
const GO_VALUES = new Set([...GO_TIMES, 'movetime', 'depth', 'nodes', 'movestogo']);
const GO_DIGITS = 15; // the longest number a `go` argument may have (protocol.md 5.6)
const PERFT_MAX = 1000;

function echo(text) {
  return text.length <= ECHO_MAX ? text : `${text.slice(0, ECHO_MAX)}... (${text.length} chars)`;
}

// {infinite, perft (depth or null)} of `go`'s arguments; throws a RulesError
// naming the first bad one (an unknown word, a missing, non-numeric or too long value).
function parseGo(args) {
  let infinite = false;
  let perftDepth = null;
  let i = 0;
  while (i < args.length) {
    const w = args[i];
    if (w === 'infinite') {
      infinite = true;
      i += 1;
      continue;
    }
    if (!GO_VALUES.has(w) && w !== 'perft') throw new RulesError(`unknown argument '${echo(w)}'`);
    if (i + 1 >= args.length) throw new RulesError(`${w}: missing value`);
    const text = args[i + 1];
    const digits = GO_TIMES.has(w) && text.startsWith('-') ? text.slice(1) : text;
    if (!/^[0-9]+$/.test(digits) || digits.length > GO_DIGITS) {
      throw new RulesError(`${w}: expected a whole number of at most ${GO_DIGITS} digits, got '${echo(text)}'`);
    }
    if (w === 'perft') {
      if (Number(digits) > PERFT_MAX) throw new RulesError(`perft: depth must be 0 to ${PERFT_MAX}, got '${echo(text)}'`);
      perftDepth = Number(digits);
    }
    i += 2;
  }
  return { infinite, perft: perftDepth };
}

function send(line) {
  process.stdout.write(line + '\n');
}

class Bot {
  constructor() {
    this.game = GAMES['egara-guti'];
    this.pos = Position.start(this.game);
    this.seed = 0;
    this.rand = this.newRng();
    this.pending = null; // bestmove held back by `go infinite`
  }

  newRng() {
    return mulberry32(this.seed || (Date.now() ^ (process.pid << 16)));
  }

  error(what) {
    send(`info string error ${what}`);
  }

  implicitStop() {
    if (this.pending !== null) {
      send(`bestmove ${this.pending}`);
      this.pending = null;
    }
  }

  // Returns false on quit.
  handle(line) {
    const tokens = line.split(/[ \t]+/).filter((t) => t.length);
    if (!tokens.length) return true;
    const [cmd, ...args] = tokens;
    switch (cmd) {
      case 'quit': return false;
      case 'ugi':
        send('id name guti greedy bot (js)');
        send('id author guti project');
        send('option name UGI_Variant type combo default egara-guti var egara-guti var pretwa');
        send(`option name Seed type spin default 0 min 0 max ${SEED_MAX}`);
        send('ugiok');
        break;
      case 'isready': send('readyok'); break;
      case 'setoption': this.setoption(args); break;
      case 'uginewgame':
        this.implicitStop();
        this.pos = Position.start(this.game);
        this.rand = this.newRng();
        break;
      case 'position': {
        // All or nothing: a rejected line leaves the bot as it was (a held
        // `go infinite` included).
        let pos;
        try {
          pos = this.parsePosition(args);
        } catch (e) {
          if (!(e instanceof RulesError)) throw e;
          this.error(`position: ${e.message}`);
          break;
        }
        this.implicitStop();
        this.pos = pos;
        break;
      }
      case 'go': this.go(args); break;
      case 'stop': this.implicitStop(); break;
      case 'query': this.query(args); break;
      case 'd': this.display(); break;
      default: send(`info string unknown command ${echo(line.trim())}`);
    }
    return true;
  }

  setoption(args) {
    const at = args.indexOf('value', 1);
    if (args[0] !== 'name' || at < 0) {
      this.error(`setoption: expected 'name <NAME> value <VALUE>', got '${echo(args.join(' '))}'`);
      return;
    }
    const name = args.slice(1, at).join(' ').toLowerCase();
    const value = args.slice(at + 1).join(' ');
    if (name === 'ugi_variant') {
      const g = Object.hasOwn(GAMES, value.toLowerCase()) ? GAMES[value.toLowerCase()] : null;
      if (!g) {
        this.error(`setoption UGI_Variant: unknown game '${echo(value)}'`);
        return;
      }
      this.implicitStop();
      this.game = g;
      this.pos = Position.start(g);
    } else if (name === 'seed') {
      if (!/^[0-9]+$/.test(value) || Number(value) > SEED_MAX) {
        this.error(`setoption Seed: expected an integer 0..${SEED_MAX}, got '${echo(value)}'`);
        return;
      }
      this.seed = Number(value);
      this.rand = this.newRng();
    } else {
      this.error(`setoption: unknown option '${echo(name)}'`);
    }
  }

  parsePosition(args) {
    const mi = args.indexOf('moves');
    const base = mi < 0 ? args : args.slice(0, mi);
    const moves = mi < 0 ? [] : args.slice(mi + 1);
    let pos;
    if (base.length === 1 && base[0] === 'startpos') pos = Position.start(this.game);
    else if (base.length && base[0] === 'fen') pos = Position.fromFen(this.game, base.slice(1).join(' '));
    else throw new RulesError(`expected 'startpos' or 'fen <FEN>', got '${echo(base.join(' '))}'`);
    moves.forEach((text, i) => {
      let m;
      try {
        m = pos.parseMove(text);
      } catch (e) {
        throw new RulesError(`move ${i + 1}: ${echo(e.message)}`);
      }
      pos.push(m);
    });
    return pos;
  }

  // protocol.md 5.2 `go` and 5.6: a bare `go` is `go infinite`, `infinite` wins
  // over every limit, and one bad argument rejects the whole line (one error, no
  // bestmove, a held `go infinite` still held). The bot does not search: the
  // limits are checked and otherwise unused.
  go(args) {
    let parsed;
    try {
      parsed = parseGo(args);
    } catch (e) {
      if (!(e instanceof RulesError)) throw e;
      this.error(`go: ${e.message}`);
      return;
    }
    this.implicitStop();
    if (parsed.perft !== null) {
      this.perft(parsed.perft);
      return;
    }
    const moves = this.pos.legalMoves();
    const best = moves.length ? moveString(chooseGreedy(moves, this.rand)) : 'none';
    if ((parsed.infinite || !args.length) && moves.length) this.pending = best;
    else send(`bestmove ${best}`);
  }

  perft(depth) {
    if (depth === 0) {
      send('nodes 1');
      return;
    }
    let total = 0;
    for (const m of this.pos.legalMoves()) {
      this.pos.push(m);
      const n = perft(this.pos, depth - 1);
      this.pos.pop();
      send(`${moveString(m)}: ${n}`);
      total += n;
    }
    send(`nodes ${total}`);
  }

  query(args) {
    const o = this.pos.outcome();
    const what = args.length === 1 ? args[0] : null;
    if (what === 'gameover') send(`response ${o ? 'true' : 'false'}`);
    else if (what === 'p1turn') send(`response ${this.pos.side === WHITE ? 'true' : 'false'}`);
    else if (what === 'result') send(`response ${o ? o[0] : 'none'}`);
    else this.error(`query: expected gameover, p1turn or result, got '${echo(args.join(' '))}'`);
  }

  display() {
    const p = this.pos;
    send(`info string ${this.game.name}, ${p.side === WHITE ? 'White' : 'Black'} to move`);
    let i = 1;
    for (const width of this.game.rows) {
      const row = range(i, i + width).map((q) => `${String(q).padStart(2)}:${p.cells[q]}`);
      send(`info string ${row.join('  ')}`);
      i += width;
    }
    const o = p.outcome();
    if (o) send(`info string game over: ${o[0]} (${o[1]})`);
    send(`fen ${p.fen()}`);
    send(['legal', ...p.legalMoves().map(moveString)].join(' '));
  }
}

// ---------------------------------------------------------------- main loop
// Reads stdin as a byte stream and splits on '\n' itself, so arbitrarily long
// lines are handled and output ordering stays strictly sequential.

function main() {
  const bot = new Bot();
  let buffer = '';
  let done = false;
  const { StringDecoder } = require('node:string_decoder');
  const decoder = new StringDecoder('utf8');
  const finish = () => {
    if (done) return;
    done = true;
    process.stdin.pause();
    process.stdout.end();
    process.stdout.on('finish', () => process.exit(0));
  };
  process.stdout.on('error', () => process.exit(0)); // reader went away
  process.stdin.on('data', (chunk) => {
    if (done) return;
    buffer += decoder.write(chunk);
    let nl;
    while (!done && (nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (!bot.handle(line)) finish();
    }
  });
  process.stdin.on('end', () => {
    if (!done && buffer.length) bot.handle(buffer.replace(/\r$/, ''));
    finish();
  });
}

main();
