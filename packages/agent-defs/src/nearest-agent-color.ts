import { type AgentColor } from '@delegate/core';

// Hue, in degrees, that stands for each agent color.
const COLOR_HUES: ReadonlyArray<readonly [AgentColor, number]> = [
  ['red', 0],
  ['orange', 30],
  ['yellow', 60],
  ['green', 120],
  ['cyan', 180],
  ['blue', 225],
  ['purple', 270],
  ['pink', 320],
];

const HEX_COLOR = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i;

/** Whether a value is written as a CSS hex color (`#f60`, `#FF6B35`, with or without `#`). */
export function isHexColor(value: string): boolean {
  return HEX_COLOR.test(value.trim());
}

/**
 * Maps a CSS hex color to the agent color with the nearest hue, or `undefined` for a grey
 * (too little saturation to have a hue) or for text that is not a hex color.
 */
export function nearestAgentColor(value: string): AgentColor | undefined {
  const digits = HEX_COLOR.exec(value.trim())?.[1];
  if (digits === undefined) return undefined;
  const full = digits.length === 3 ? [...digits].map((digit) => digit + digit).join('') : digits;
  const [red, green, blue] = [0, 2, 4].map(
    (start) => parseInt(full.slice(start, start + 2), 16) / 255,
  ) as [number, number, number];
  const max = Math.max(red, green, blue);
  const min = Math.min(red, green, blue);
  const chroma = max - min;
  const lightness = (max + min) / 2;
  const saturation = chroma === 0 ? 0 : chroma / (1 - Math.abs(2 * lightness - 1));
  if (chroma < 0.08 || saturation < 0.15) return undefined;
  let hue: number;
  if (max === red) hue = (((green - blue) / chroma) % 6) * 60;
  else if (max === green) hue = ((blue - red) / chroma + 2) * 60;
  else hue = ((red - green) / chroma + 4) * 60;
  if (hue < 0) hue += 360;
  let best: AgentColor = 'red';
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const [color, anchor] of COLOR_HUES) {
    const difference = Math.abs(hue - anchor);
    const distance = Math.min(difference, 360 - difference);
    if (distance < bestDistance) {
      best = color;
      bestDistance = distance;
    }
  }
  return best;
}
