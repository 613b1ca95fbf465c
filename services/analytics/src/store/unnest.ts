/**
 * `rows` as the parameters of `unnest($1::text[], $2::int[], …)`: one array per column,
 * `columns` naming the rows' properties in placeholder order. A time goes as ISO text (a
 * null stays null), which both Postgres and PGlite read into a timestamptz[].
 */
export function columnArrays<T>(rows: readonly T[], columns: readonly (keyof T)[]): unknown[][] {
  return columns.map((column) =>
    rows.map((row) => {
      const value = row[column];
      return value instanceof Date ? value.toISOString() : value;
    }),
  );
}
