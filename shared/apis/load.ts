// Reading Kubernetes manifests: multi-document YAML, JSON, and `kind: List` (or any *List kind).
// Parsing is pure (parseManifests); reading files and directories sits apart (readManifestFiles).

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';
import type { Problem } from './problems';

export interface LoadedDocument {
  file: string;
  /** 1-based line where the document (or List item) starts. */
  line: number;
  object: Record<string, unknown>;
}

export interface LoadResult {
  documents: LoadedDocument[];
  problems: Problem[];
}

const MANIFEST_EXTENSIONS = /\.(ya?ml|json)$/i;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses one file's text. Syntax errors become problems with file and line. */
export function parseManifests(text: string, file: string): LoadResult {
  const lineCounter = new LineCounter();
  const documents: LoadedDocument[] = [];
  const problems: Problem[] = [];
  for (const doc of parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false })) {
    if (doc.errors.length > 0) {
      for (const error of doc.errors) {
        const line = lineCounter.linePos(error.pos[0]).line;
        problems.push({ severity: 'error', file, line, message: `YAML syntax error: ${error.message.split('\n')[0]}` });
      }
      continue;
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) continue;
    const line = doc.contents ? lineCounter.linePos(doc.contents.range[0]).line : 1;
    if (!isRecord(value)) {
      problems.push({
        severity: 'error',
        file,
        line,
        message: 'expected a Kubernetes object (a mapping), not a list or scalar',
      });
      continue;
    }
    const kind = value.kind;
    if (typeof kind === 'string' && kind.endsWith('List') && Array.isArray(value.items)) {
      value.items.forEach((item: unknown, index: number) => {
        if (isRecord(item)) documents.push({ file, line, object: item });
        else problems.push({ severity: 'error', file, line, path: `items[${index}]`, message: 'expected an object' });
      });
      continue;
    }
    documents.push({ file, line, object: value });
  }
  return { documents, problems };
}

/** Expands FILE|DIR arguments (directories recursively, .yaml/.yml/.json, sorted) into file paths. */
export function expandManifestPaths(paths: readonly string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) throw new Error(`${path}: no such file or directory`);
    if (stat.isDirectory()) {
      const entries = readdirSync(path).sort();
      const nested = entries
        .map((entry) => join(path, entry))
        .filter((child) => statSync(child).isDirectory() || MANIFEST_EXTENSIONS.test(child));
      for (const file of expandManifestPaths(nested)) files.push(file);
    } else {
      files.push(path);
    }
  }
  return files;
}

/** Reads and parses every manifest under the given paths. */
export function readManifestFiles(paths: readonly string[]): LoadResult {
  const result: LoadResult = { documents: [], problems: [] };
  for (const file of expandManifestPaths(paths)) {
    const parsed = parseManifests(readFileSync(file, 'utf8'), file);
    // Item by item: spreading a file of ~120k documents into push() overflows the call stack.
    for (const document of parsed.documents) result.documents.push(document);
    for (const problem of parsed.problems) result.problems.push(problem);
  }
  return result;
}
