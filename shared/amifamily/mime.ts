// A small MIME multipart reader/writer with the semantics of Go's net/mail + mime/multipart, which
// Karpenter uses to merge a user's userData with its own part. Parsing is strict enough to refuse
// text that cloud-init would not read as an archive (the caller turns that into a node-class error).

export const BOUNDARY = '//';
export const CONTENT_TYPE_SHELL_SCRIPT = 'text/x-shellscript; charset="us-ascii"';
export const CONTENT_TYPE_NODE_CONFIG = 'application/node.eks.aws';

/** One part: its headers (canonical names, e.g. Content-Type) and body. */
export interface MimePart {
  headers: [name: string, value: string][];
  content: string;
}

export class MimeParseError extends Error {
  override readonly name = 'MimeParseError';
}

/** Karpenter's test for "this userData is already MIME": the trimmed text starts with a MIME header. */
export function looksLikeMime(text: string): boolean {
  const trimmed = text.trim();
  return trimmed.startsWith('MIME-Version:') || trimmed.startsWith('Content-Type:');
}

export function contentTypeOf(part: MimePart): string {
  return part.headers.find(([name]) => name === 'Content-Type')?.[1] ?? '';
}

export function mimePart(contentType: string, content: string): MimePart {
  return { headers: [['Content-Type', contentType]], content };
}

// textproto.CanonicalMIMEHeaderKey: upper-case the first letter and every letter after '-'.
function canonicalHeaderName(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase());
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

interface HeaderBlock {
  headers: [string, string][];
  /** Index of the first body character. */
  bodyStart: number;
}

// Reads RFC 5322 style header lines (with continuation lines) up to the first empty line.
function readHeaders(text: string, start: number, what: string): HeaderBlock {
  const headers: [string, string][] = [];
  let pos = start;
  for (;;) {
    if (pos >= text.length) {
      // net/mail accepts a message that ends right after its headers.
      return { headers, bodyStart: text.length };
    }
    const nl = text.indexOf('\n', pos);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(pos, end).replace(/\r$/, '');
    const next = nl < 0 ? text.length : nl + 1;
    if (line === '') return { headers, bodyStart: next };
    if (/^[ \t]/.test(line)) {
      const last = headers[headers.length - 1];
      if (!last) throw new MimeParseError(`${what}: continuation line before any header: "${line.trim()}"`);
      last[1] = `${last[1]} ${line.trim()}`;
    } else {
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon) : '';
      if (!HEADER_NAME.test(name)) throw new MimeParseError(`${what}: malformed header line "${line}"`);
      headers.push([canonicalHeaderName(name), line.slice(colon + 1).trim()]);
    }
    pos = next;
  }
}

/** mime.ParseMediaType, reduced to what a multipart header needs: the media type and its parameters. */
export function parseMediaType(value: string): { mediaType: string; params: Record<string, string> } {
  const [rawType = '', ...rest] = splitParams(value);
  const mediaType = rawType.trim().toLowerCase();
  if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+\/[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(mediaType)) {
    throw new MimeParseError(`invalid media type "${value}"`);
  }
  const params: Record<string, string> = {};
  for (const raw of rest) {
    const param = raw.trim();
    if (param === '') continue;
    const eq = param.indexOf('=');
    if (eq <= 0) throw new MimeParseError(`invalid media parameter "${param}" in "${value}"`);
    let paramValue = param.slice(eq + 1).trim();
    if (paramValue.startsWith('"')) {
      if (!paramValue.endsWith('"') || paramValue.length < 2) {
        throw new MimeParseError(`unterminated quoted parameter in "${value}"`);
      }
      paramValue = paramValue.slice(1, -1).replace(/\\(.)/g, '$1');
    }
    params[param.slice(0, eq).trim().toLowerCase()] = paramValue;
  }
  return { mediaType, params };
}

// Splits on ';' outside double quotes.
function splitParams(value: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i] ?? '';
    if (c === '\\' && quoted) {
      current += c + (value[i + 1] ?? '');
      i++;
    } else if (c === '"') {
      quoted = !quoted;
      current += c;
    } else if (c === ';' && !quoted) {
      out.push(current);
      current = '';
    } else current += c;
  }
  out.push(current);
  return out;
}

/**
 * Parses a multipart MIME archive into its parts. A part's body excludes the line break before the
 * next delimiter, as in Go's multipart.Reader, so parse → serialize round-trips byte for byte.
 */
export function parseMimeArchive(text: string): MimePart[] {
  const { headers, bodyStart } = readHeaders(text, 0, 'MIME header');
  const contentType = headers.find(([name]) => name === 'Content-Type')?.[1];
  if (contentType === undefined) throw new MimeParseError('no Content-Type header');
  const { mediaType, params } = parseMediaType(contentType);
  if (!mediaType.startsWith('multipart/')) throw new MimeParseError(`media type ${mediaType} is not multipart`);
  const boundary = params.boundary;
  if (!boundary) throw new MimeParseError('multipart Content-Type has no boundary parameter');

  const delimiter = `--${boundary}`;
  const lines = splitLinesKeepingEnds(text.slice(bodyStart));
  const parts: MimePart[] = [];
  let current: string[] | undefined;
  let closed = false;
  const isDelimiter = (line: string, suffix: string) => {
    const stripped = line.replace(/\r?\n$/, '');
    return stripped.startsWith(delimiter + suffix) && stripped.slice(delimiter.length + suffix.length).trim() === '';
  };
  const finish = () => {
    if (!current) return;
    // The line break before a delimiter belongs to the delimiter.
    const raw = current.join('').replace(/\r?\n$/, '');
    const { headers: partHeaders, bodyStart: partBody } = readHeaders(raw, 0, `MIME part ${parts.length + 1}`);
    parts.push({ headers: partHeaders, content: raw.slice(partBody) });
  };
  for (const line of lines) {
    if (isDelimiter(line, '--')) {
      finish();
      current = undefined;
      closed = true;
      break;
    }
    if (isDelimiter(line, '')) {
      finish();
      current = [];
      continue;
    }
    current?.push(line);
  }
  if (!closed && current && !hasCompleteHeaderBlock(current)) {
    // Text ends after a delimiter, before that part's headers end: Go's reader reports io.EOF there,
    // which Karpenter takes as the end of the archive, so the parts before it stand and this stub
    // is dropped. Its header lines must still be well-formed, as Go reads them.
    readHeaders(current.join(''), 0, `MIME part ${parts.length + 1}`);
    closed = true;
  }
  if (!closed) {
    throw new MimeParseError(
      current ? `archive ends without the closing "${delimiter}--" line` : `no "${delimiter}" boundary line found`,
    );
  }
  return parts;
}

function hasCompleteHeaderBlock(lines: readonly string[]): boolean {
  return lines.some((line) => line.replace(/\r?\n$/, '') === '');
}

function splitLinesKeepingEnds(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * Serializes parts the way Go's multipart.Writer does (with Karpenter's header lines first and
 * carriage returns removed): headers sorted by name, a newline before each later delimiter, and a
 * closing delimiter followed by a newline.
 */
export function serializeMimeArchive(parts: readonly MimePart[], boundary = BOUNDARY): string {
  let out = `MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="${boundary}"\n\n`;
  parts.forEach((part, i) => {
    const headers = [...part.headers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    out += `${i > 0 ? '\n' : ''}--${boundary}\n${headers.map(([n, v]) => `${n}: ${v}\n`).join('')}\n${part.content}`;
  });
  out += `\n--${boundary}--\n`;
  return out.replaceAll('\r', '');
}
