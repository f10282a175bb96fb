// The delegate-server dashboard: plain ES modules, Preact + htm served by the server.
/* global document, sessionStorage, fetch, AbortController, TextDecoder, setTimeout, clearTimeout, setInterval, clearInterval */
import { html, render, useEffect, useMemo, useRef, useState } from '/vendor/preact-htm.js';

const TOKEN_KEY = 'delegate-server-token';
const PALETTE = [
  '#6ea8fe',
  '#3fb950',
  '#d29922',
  '#bc8cff',
  '#ff7b72',
  '#39c5cf',
  '#f778ba',
  '#ffa657',
];
const NAMED = {
  red: '#ff7b72',
  blue: '#6ea8fe',
  green: '#3fb950',
  yellow: '#d29922',
  purple: '#bc8cff',
  orange: '#ffa657',
  pink: '#f778ba',
  cyan: '#39c5cf',
};
const ACTIVE = new Set(['queued', 'running']);

class Unauthorized extends Error {}

/** Calls the API with the token; throws Unauthorized on 401 and an Error naming the answer otherwise. */
async function api(path, { method = 'GET', body } = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY) ?? '';
  const response = await fetch(path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 401) throw new Unauthorized('The token was refused.');
  const type = response.headers.get('content-type') ?? '';
  const payload = type.startsWith('application/json')
    ? await response.json()
    : await response.text();
  if (!response.ok)
    throw new Error(payload?.error?.message ?? `${response.status} ${response.statusText}`);
  return payload;
}

function colorOf(agent) {
  if (agent.color && NAMED[agent.color]) return NAMED[agent.color];
  let hash = 0;
  for (const character of agent.agentType) hash = (hash * 31 + character.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

function money(value) {
  return `$${value.toFixed(value < 0.01 ? 5 : 4)}`;
}

/** How often a run whose stream ended is asked again for events (a resume, a message). */
const ENDED_POLL_MS = 3_000;

/**
 * Follows a run's SSE stream with fetch (EventSource cannot send the token), reconnecting
 * with Last-Event-ID after a drop. Once the run has ended, asks again every ENDED_POLL_MS,
 * so a run resumed or sent a message (here or elsewhere) is followed again from where it
 * stopped. Returns a stop function.
 */
function followEvents(runId, { onEvent, onState }) {
  let stopped = false;
  let lastId = 0;
  let controller;
  let timer;
  const pause = (ms) =>
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    });
  const loop = async () => {
    let delay = 500;
    let ended = false;
    const end = () => {
      if (!ended) onState('ended');
      ended = true;
    };
    while (!stopped) {
      controller = new AbortController();
      try {
        if (!ended) onState('connecting');
        const response = await fetch(`/v1/runs/${runId}/events`, {
          headers: {
            authorization: `Bearer ${sessionStorage.getItem(TOKEN_KEY) ?? ''}`,
            ...(lastId > 0 ? { 'last-event-id': String(lastId) } : {}),
          },
          signal: controller.signal,
        });
        if (response.status === 401) throw new Unauthorized('The token was refused.');
        if (response.status === 204) {
          end();
          await pause(ENDED_POLL_MS);
          continue;
        }
        if (!response.ok || !response.body) throw new Error(`events: ${response.status}`);
        onState('live');
        ended = false;
        delay = 500;
        let finished = false;
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let boundary;
          while ((boundary = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, boundary);
            buffer = buffer.slice(boundary + 2);
            let id;
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('id:')) id = Number(line.slice(3).trim());
              else if (line.startsWith('data:')) data += line.slice(5).trim();
            }
            if (id === undefined || !data) continue;
            lastId = id;
            const event = JSON.parse(data);
            if (event.type === 'run.status') finished = !ACTIVE.has(event.data.status);
            onEvent(event);
          }
        }
        if (finished) {
          end();
          await pause(ENDED_POLL_MS);
          continue;
        }
      } catch (error) {
        if (stopped) return;
        if (error instanceof Unauthorized) return onState('unauthorized');
      }
      ended = false;
      onState('reconnecting');
      await pause(delay);
      delay = Math.min(delay * 2, 8_000);
    }
  };
  void loop();
  return () => {
    stopped = true;
    clearTimeout(timer);
    controller?.abort();
  };
}

function Login({ error, onToken }) {
  const [value, setValue] = useState('');
  return html`<form
    class="card login"
    onSubmit=${(event) => {
      event.preventDefault();
      if (value.trim()) onToken(value.trim());
    }}
  >
    <h2>Delegate server</h2>
    <p class="muted">
      Enter the API token (DELEGATE_SERVER_TOKEN, or the one the server printed on its first start).
      It stays in this tab's session storage.
    </p>
    <input
      type="password"
      name="token"
      placeholder="API token"
      value=${value}
      onInput=${(event) => setValue(event.target.value)}
      autocomplete="off"
    />
    ${error ? html`<p class="error">${error}</p>` : null}
    <button type="submit">Open dashboard</button>
  </form>`;
}

function NewRun({ onCreated, onError }) {
  const [prompt, setPrompt] = useState('');
  const [workspace, setWorkspace] = useState('');
  const [fork, setFork] = useState(true);
  const [mode, setMode] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    if (!prompt.trim()) return;
    setBusy(true);
    try {
      const created = await api('/v1/runs', {
        method: 'POST',
        body: {
          prompt,
          fork,
          ...(workspace.trim() ? { workspace: workspace.trim() } : {}),
          ...(mode ? { permissionMode: mode } : {}),
        },
      });
      setPrompt('');
      onCreated(created.id);
    } catch (error) {
      onError(error);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card" onSubmit=${submit} aria-label="New run">
    <strong>New run</strong>
    <textarea
      name="prompt"
      placeholder="What should the agent do?"
      value=${prompt}
      onInput=${(event) => setPrompt(event.target.value)}
    ></textarea>
    <div class="form-row">
      <input
        name="workspace"
        placeholder="workspace (default: first root)"
        value=${workspace}
        onInput=${(event) => setWorkspace(event.target.value)}
      />
    </div>
    <div class="form-row">
      <select
        name="permissionMode"
        value=${mode}
        onChange=${(event) => setMode(event.target.value)}
      >
        <option value="">default mode</option>
        <option value="acceptEdits">acceptEdits</option>
        <option value="plan">plan</option>
        <option value="dontAsk">dontAsk</option>
        <option value="bypassPermissions">bypassPermissions</option>
      </select>
      <label
        ><input
          type="checkbox"
          name="fork"
          checked=${fork}
          onChange=${(event) => setFork(event.target.checked)}
        />
        fork</label
      >
      <button type="submit" disabled=${busy}>Start</button>
    </div>
  </form>`;
}

function RunList({ runs, selected, onSelect }) {
  if (runs.length === 0) return html`<p class="muted">No runs yet.</p>`;
  return html`<ul class="runs">
    ${runs.map(
      (run) =>
        html`<li
          key=${run.id}
          class=${run.id === selected ? 'selected' : ''}
          data-run-id=${run.id}
          onClick=${() => onSelect(run.id)}
        >
          <div class="prompt">${run.prompt}</div>
          <span class=${`badge status-${run.status}`}>${run.status}</span>
          <span class="muted"> ${new Date(run.createdAt).toLocaleTimeString()}</span>
        </li>`,
    )}
  </ul>`;
}

function TokenBar({ usage, costUsd, priced }) {
  const read = usage.cache_read_input_tokens;
  const write = usage.cache_creation_input_tokens;
  const uncached = usage.input_tokens;
  const total = read + write + uncached || 1;
  const width = (value) => ({ width: `${(100 * value) / total}%` });
  return html`<div class="usage">
    <div class="bar" title="input tokens: cache read / cache write / uncached">
      <span class="read" style=${width(read)}></span>
      <span class="write" style=${width(write)}></span>
      <span class="uncached" style=${width(uncached)}></span>
    </div>
    <div class="legend">
      <i class="read"></i>read ${read}<i class="write"></i>write ${write}<i class="uncached"></i
      >uncached ${uncached} · out ${usage.output_tokens} ·
      <span class="cost">${money(costUsd)}${priced ? '' : ' (unpriced model)'}</span>
    </div>
  </div>`;
}

function AgentNode({ agent, children, byParent, runActive, selected, onSelect, onAction }) {
  const running = agent.status === 'running' && runActive;
  const canBackground = running && agent.mode === 'foreground' && !agent.backgrounded;
  const mode =
    agent.mode === 'main'
      ? 'main'
      : agent.backgrounded && agent.mode !== 'background'
        ? `${agent.mode} → background`
        : agent.mode;
  return html`<li>
    <div
      class=${`agent${selected === agent.agentId ? ' selected' : ''}`}
      data-agent-id=${agent.agentId}
      data-status=${agent.status}
      data-type=${agent.agentType}
      style=${{ '--agent-color': colorOf(agent) }}
      onClick=${() => onSelect(agent.agentId)}
    >
      <div class="head">
        <span class="type">${agent.agentType}</span>
        <span class="badge mode">${mode}</span>
        <span class=${`badge status status-${agent.status}`}>${agent.status}</span>
        ${agent.currentTool ? html`<span class="tool">⚙ ${agent.currentTool}</span>` : null}
        <span class="muted">${agent.description}</span>
        <span class="actions">
          ${
            canBackground
              ? html`<button
                  class="background"
                  onClick=${(event) => {
                    event.stopPropagation();
                    onAction(agent, 'background');
                  }}
                >
                  Background
                </button>`
              : null
          }
          ${
            running
              ? html`<button
                  class="danger cancel"
                  onClick=${(event) => {
                    event.stopPropagation();
                    onAction(agent, 'cancel');
                  }}
                >
                  Cancel
                </button>`
              : null
          }
        </span>
      </div>
      <${TokenBar} usage=${agent.usage} costUsd=${agent.costUsd} priced=${agent.priced} />
    </div>
    ${
      children.length > 0
        ? html`<ul>
            ${children.map(
              (child) =>
                html`<${AgentNode}
                  key=${child.agentId}
                  agent=${child}
                  children=${byParent.get(child.agentId) ?? []}
                  byParent=${byParent}
                  runActive=${runActive}
                  selected=${selected}
                  onSelect=${onSelect}
                  onAction=${onAction}
                />`,
            )}
          </ul>`
        : null
    }
  </li>`;
}

function describeEntry(entry) {
  const content = entry.message?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => {
      if (block.type === 'text') return block.text;
      if (block.type === 'tool_use') return `→ ${block.name}(${JSON.stringify(block.input)})`;
      if (block.type === 'tool_result') {
        const text =
          typeof block.content === 'string'
            ? block.content
            : (block.content ?? [])
                .map((part) => (part.type === 'text' ? part.text : `[${part.type}]`))
                .join('\n');
        return `← ${text.slice(0, 2_000)}`;
      }
      if (block.type === 'thinking') return `(thinking) ${block.thinking.slice(0, 500)}`;
      return `[${block.type}]`;
    })
    .join('\n');
}

function Transcript({ runId, agentId, version }) {
  const [entries, setEntries] = useState([]);
  const [error, setError] = useState('');
  useEffect(() => {
    let cancelled = false;
    api(`/v1/runs/${runId}/transcript?agent=${encodeURIComponent(agentId)}`)
      .then((text) => {
        if (cancelled) return;
        setError('');
        setEntries(
          String(text)
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line)),
        );
      })
      .catch((failure) => !cancelled && setError(failure.message));
    return () => {
      cancelled = true;
    };
  }, [runId, agentId, version]);
  return html`<div class="card" aria-label="Transcript">
    <strong>Transcript of ${agentId}</strong>
    ${error ? html`<p class="muted">${error}</p>` : null}
    <div class="transcript">
      ${entries
        .filter((entry) => !entry.isMeta)
        .map(
          (entry) =>
            html`<div class="entry" key=${entry.uuid}>
              <span class="role">${entry.type}</span> ${describeEntry(entry)}
            </div>`,
        )}
    </div>
  </div>`;
}

function RunView({ runId, onUnauthorized, onChanged }) {
  const [run, setRun] = useState(null);
  const [log, setLog] = useState([]);
  const [connection, setConnection] = useState('connecting');
  const [selected, setSelected] = useState('main');
  const [message, setMessage] = useState('');
  const [version, setVersion] = useState(0);
  const refreshTimer = useRef(undefined);
  const transcriptTimer = useRef(undefined);
  const selectedRef = useRef('main');
  selectedRef.current = selected;

  const refresh = () =>
    api(`/v1/runs/${runId}`)
      .then(setRun)
      .catch((error) => {
        if (error instanceof Unauthorized) onUnauthorized();
        else setMessage(error.message);
      });
  useEffect(() => {
    setRun(null);
    setLog([]);
    setSelected('main');
    void refresh();
    const stop = followEvents(runId, {
      onEvent: (event) => {
        setLog((previous) => [...previous.slice(-199), event]);
        if (event.type === 'run.status') onChanged();
        // Throttled, not debounced: a steady stream of events still updates the tree, and
        // a busy run stays well under the server's per-token rate limit.
        refreshTimer.current ??= setTimeout(() => {
          refreshTimer.current = undefined;
          void refresh();
        }, 250);
        if (event.agentId === selectedRef.current || event.type === 'run.status') {
          transcriptTimer.current ??= setTimeout(() => {
            transcriptTimer.current = undefined;
            setVersion((value) => value + 1);
          }, 1_000);
        }
      },
      onState: (state) => {
        setConnection(state);
        if (state === 'unauthorized') onUnauthorized();
        if (state === 'ended') void refresh();
      },
    });
    return () => {
      stop();
      clearTimeout(refreshTimer.current);
      clearTimeout(transcriptTimer.current);
      refreshTimer.current = undefined;
      transcriptTimer.current = undefined;
    };
  }, [runId]);

  const byParent = useMemo(() => {
    const map = new Map();
    for (const agent of run?.agents ?? []) {
      const key = agent.parentAgentId ?? '';
      map.set(key, [...(map.get(key) ?? []), agent]);
    }
    return map;
  }, [run]);

  const act = async (path) => {
    try {
      await api(path, { method: 'POST' });
      setMessage('');
    } catch (error) {
      if (error instanceof Unauthorized) onUnauthorized();
      else setMessage(error.message);
    }
    void refresh();
  };
  if (!run) return html`<p class="muted">Loading run…</p>`;
  const active = ACTIVE.has(run.status);
  return html`<div data-run=${run.id}>
    <div class="card">
      <div class="head">
        <strong>${run.id}</strong>
        <span class=${`badge run-status status-${run.status}`}>${run.status}</span>
        <span class="connection muted"> events: ${connection}</span>
      </div>
      <p>${run.prompt}</p>
      ${run.result ? html`<p><span class="muted">Result:</span> ${run.result}</p>` : null}
      ${run.error ? html`<p class="error">${run.error.message}</p>` : null}
      <div class="form-row">
        <span>Total <span class="total-cost">${money(run.costUsd)}</span></span>
        ${active ? html`<button class="danger cancel-run" onClick=${() => act(`/v1/runs/${run.id}/cancel`)}>Cancel run</button>` : null}
        ${['interrupted', 'failed', 'cancelled'].includes(run.status) ? html`<button onClick=${() => act(`/v1/runs/${run.id}/resume`)}>Resume</button>` : null}
      </div>
      ${message ? html`<p class="error">${message}</p>` : null}
    </div>
    <div class="card" aria-label="Agent tree">
      <strong>Agents</strong>
      <ul class="tree">
        ${(byParent.get('') ?? []).map(
          (agent) =>
            html`<${AgentNode}
              key=${agent.agentId}
              agent=${agent}
              children=${byParent.get(agent.agentId) ?? []}
              byParent=${byParent}
              runActive=${active}
              selected=${selected}
              onSelect=${setSelected}
              onAction=${(target, action) => act(`/v1/runs/${run.id}/agents/${target.agentId}/${action}`)}
            />`,
        )}
      </ul>
    </div>
    <${Transcript} runId=${run.id} agentId=${selected} version=${version} />
    <div class="card">
      <strong>Events</strong>
      <div class="log">
        ${log.slice(-60).map((event) => html`<div key=${event.seq}>#${event.seq} ${event.type}${event.agentId ? ` · ${event.agentId}` : ''}${event.data.status ? ` · ${event.data.status}` : ''}</div>`)}
      </div>
    </div>
  </div>`;
}

function App() {
  const [token, setToken] = useState(sessionStorage.getItem(TOKEN_KEY));
  const [loginError, setLoginError] = useState('');
  const [runs, setRuns] = useState([]);
  const [selected, setSelected] = useState(null);
  const [error, setError] = useState('');

  const unauthorized = () => {
    sessionStorage.removeItem(TOKEN_KEY);
    setToken(null);
    setLoginError('The server refused the token. Enter it again.');
  };
  const loadRuns = () =>
    api('/v1/runs?limit=50')
      .then((page) => setRuns(page.runs))
      .catch((failure) => {
        if (failure instanceof Unauthorized) unauthorized();
        else setError(failure.message);
      });
  useEffect(() => {
    if (!token) return undefined;
    void loadRuns();
    const timer = setInterval(loadRuns, 5_000);
    return () => clearInterval(timer);
  }, [token]);

  if (!token) {
    return html`<${Login}
      error=${loginError}
      onToken=${(value) => {
        sessionStorage.setItem(TOKEN_KEY, value);
        setLoginError('');
        setToken(value);
      }}
    />`;
  }
  return html`<header class="top">
      <h1>Delegate</h1>
      <button
        onClick=${() => {
          sessionStorage.removeItem(TOKEN_KEY);
          setToken(null);
        }}
      >
        Forget token
      </button>
    </header>
    <div class="layout">
      <aside class="sidebar">
        <${NewRun}
          onCreated=${(id) => {
            setSelected(id);
            void loadRuns();
          }}
          onError=${(failure) => (failure instanceof Unauthorized ? unauthorized() : setError(failure.message))}
        />
        ${error ? html`<p class="error">${error}</p>` : null}
        <${RunList} runs=${runs} selected=${selected} onSelect=${setSelected} />
      </aside>
      <main class="main">
        ${selected ? html`<${RunView} key=${selected} runId=${selected} onUnauthorized=${unauthorized} onChanged=${loadRuns} />` : html`<p class="muted">Start a run or pick one on the left.</p>`}
      </main>
    </div>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
