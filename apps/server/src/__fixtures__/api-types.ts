import type { z } from 'zod';
import type { ErrorView, RunEventView, RunListView, RunView } from '../http/schemas.js';

/** `GET /v1/runs/:id` as tests read it. */
export type ApiRun = z.infer<typeof RunView>;
/** An agent of `ApiRun`. */
export type ApiAgent = ApiRun['agents'][number];
/** `GET /v1/runs` as tests read it. */
export type ApiRunList = z.infer<typeof RunListView>;
/** An error answer. */
export type ApiError = z.infer<typeof ErrorView>;
/** One SSE event's data. */
export type ApiEvent = z.infer<typeof RunEventView>;

/** Reads a JSON answer as `T`. */
export async function json<T>(response: Response): Promise<T> {
  return (await response.json()) as T;
}
