// Disruption budget schedules: the standard 5-field cron syntax Karpenter parses with robfig/cron's
// ParseStandard (minute hour day-of-month month day-of-week, lists, ranges, steps, month and weekday
// names, `?` for either day field) plus the @-descriptors the CRD admits. Evaluated in UTC.

export interface CronSchedule {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  daysOfWeek: ReadonlySet<number>;
  /** Cron's day rule: when both day fields are restricted, either may match; `*` leaves the other in charge. */
  daysOfMonthRestricted: boolean;
  daysOfWeekRestricted: boolean;
}

export type CronParse = { ok: true; schedule: CronSchedule } | { ok: false; error: string };

const DESCRIPTORS: Record<string, string> = {
  '@annually': '0 0 1 1 *',
  '@yearly': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** Value of the first name (months count from 1, weekdays from 0). */
  nameBase?: number;
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  { name: 'day of week', min: 0, max: 6, names: DAY_NAMES, nameBase: 0 },
];

function parseValue(text: string, spec: FieldSpec): number | string {
  const nameIndex = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  if (nameIndex >= 0) return nameIndex + (spec.nameBase ?? 0);
  if (!/^[0-9]+$/.test(text)) return `"${text}" is not a number${spec.names ? ' or a name' : ''}`;
  const value = Number(text);
  if (value < spec.min || value > spec.max) return `${value} is out of range ${spec.min}-${spec.max}`;
  return value;
}

function parseField(text: string, spec: FieldSpec): Set<number> | string {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const [rangeText = '', stepText, extra] = part.split('/');
    if (extra !== undefined) return `too many slashes in "${part}"`;
    let low = spec.min;
    let high = spec.max;
    if (rangeText !== '*' && rangeText !== '?') {
      const [lowText = '', highText, more] = rangeText.split('-');
      if (more !== undefined) return `too many hyphens in "${part}"`;
      const lowValue = parseValue(lowText, spec);
      if (typeof lowValue === 'string') return lowValue;
      low = lowValue;
      if (highText !== undefined) {
        const highValue = parseValue(highText, spec);
        if (typeof highValue === 'string') return highValue;
        high = highValue;
      } else if (stepText === undefined) {
        high = low;
      }
    }
    let step = 1;
    if (stepText !== undefined) {
      if (!/^[0-9]+$/.test(stepText) || Number(stepText) === 0) return `step "${stepText}" must be a positive number`;
      step = Number(stepText);
    }
    if (low > high) return `range start ${low} is beyond its end ${high}`;
    for (let v = low; v <= high; v += step) values.add(v);
  }
  return values;
}

/** Parses a schedule; the error says which field is wrong and how. */
export function parseCron(text: string): CronParse {
  const expanded = DESCRIPTORS[text.trim()] ?? text.trim();
  if (expanded.startsWith('@')) {
    return {
      ok: false,
      error: `unknown descriptor "${expanded}" (use @annually, @yearly, @monthly, @weekly, @daily, @midnight or @hourly)`,
    };
  }
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5) {
    return {
      ok: false,
      error: `expected 5 fields (minute hour day-of-month month day-of-week), found ${fields.length}`,
    };
  }
  const sets: Set<number>[] = [];
  for (const [index, spec] of FIELDS.entries()) {
    const parsed = parseField(fields[index] ?? '', spec);
    if (typeof parsed === 'string') return { ok: false, error: `${spec.name}: ${parsed}` };
    sets.push(parsed);
  }
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = sets as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  const starred = (field: string | undefined) => field === '*' || field === '?' || field?.startsWith('*/') === true;
  return {
    ok: true,
    schedule: {
      minutes,
      hours,
      daysOfMonth,
      months,
      daysOfWeek,
      daysOfMonthRestricted: !starred(fields[2]),
      daysOfWeekRestricted: !starred(fields[4]),
    },
  };
}
