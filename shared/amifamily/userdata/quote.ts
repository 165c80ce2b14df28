// Quoting for values placed in a bootstrap command line. For values without quotes the result is the
// plain '…' Karpenter writes, so its userData stays byte-for-byte the same; no value can end the
// argument and run a command of its own.

/** POSIX shell: inside '…' nothing is special but ', which becomes '\'' (end, escaped quote, reopen). */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** PowerShell: inside '…' only quotes are special, the typographic ones included; each is doubled. */
export function powerShellQuote(value: string): string {
  return `'${value.replace(/['\u2018\u2019\u201a\u201b]/g, (quote) => quote + quote)}'`;
}
