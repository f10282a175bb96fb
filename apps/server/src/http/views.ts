import { addUsage, emptyUsage } from '@delegate/core';
import type { z } from 'zod';
import type { RunDetails } from '../runner/run-service.js';
import type { AgentRecord, RunRecord, StoredEvent, TaskRecord } from '../store/run-store.js';
import type { AgentView, RunEventView, RunSummary, RunView, TaskView } from './schemas.js';

/** A run as lists show it (no internal paths). */
export function runSummary(run: RunRecord): z.infer<typeof RunSummary> {
  return {
    id: run.id,
    status: run.status,
    prompt: run.prompt,
    workspace: run.workspace,
    options: run.options,
    result: run.result,
    error: run.error,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
  };
}

function agentView(agent: AgentRecord): z.infer<typeof AgentView> {
  const { runId: _run, transcriptPath: _path, ...view } = agent;
  return view;
}

function taskView(task: TaskRecord): z.infer<typeof TaskView> {
  const { runId: _run, ...view } = task;
  return view;
}

/** A run with its agent tree, tasks, and usage and cost summed over its agents. */
export function runView(details: RunDetails): z.infer<typeof RunView> {
  let usage = emptyUsage();
  let costUsd = 0;
  let priced = true;
  for (const agent of details.agents) {
    usage = addUsage(usage, agent.usage);
    costUsd += agent.costUsd;
    priced &&= agent.priced;
  }
  return {
    ...runSummary(details.run),
    agents: details.agents.map(agentView),
    tasks: details.tasks.map(taskView),
    usage,
    costUsd,
    priced,
  };
}

/** An event as the SSE stream sends it. */
export function eventView(event: StoredEvent): z.infer<typeof RunEventView> {
  return event as unknown as z.infer<typeof RunEventView>;
}
