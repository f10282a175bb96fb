import { AgentColor } from '@delegate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHexColor, nearestAgentColor } from './nearest-agent-color.js';

const hexDigits = (length: number) =>
  fc
    .array(fc.constantFrom(...'0123456789abcdefABCDEF'), { minLength: length, maxLength: length })
    .map((digits) => digits.join(''));

describe('nearestAgentColor', () => {
  it('maps the pure hues to their agent colors', () => {
    expect(nearestAgentColor('#ff0000')).toBe('red');
    expect(nearestAgentColor('#ff8000')).toBe('orange');
    expect(nearestAgentColor('#ffff00')).toBe('yellow');
    expect(nearestAgentColor('#00ff00')).toBe('green');
    expect(nearestAgentColor('#00ffff')).toBe('cyan');
    expect(nearestAgentColor('#0000ff')).toBe('blue');
    expect(nearestAgentColor('#8000ff')).toBe('purple');
    expect(nearestAgentColor('#ff00c0')).toBe('pink');
  });

  it('maps colors as written in real files, with or without #', () => {
    expect(nearestAgentColor('#2E86DE')).toBe('blue');
    expect(nearestAgentColor('E74C3C')).toBe('red');
    expect(nearestAgentColor(' #f60 ')).toBe('orange');
  });

  it('gives no color for greys, black and white', () => {
    for (const grey of ['#000000', '#ffffff', '#808080', '#777', '#7a7d80']) {
      expect(nearestAgentColor(grey)).toBeUndefined();
    }
  });

  it('returns undefined for text that is not a hex color', () => {
    for (const text of ['blue', '#12345', '#ggg', '', '#1234567']) {
      expect(isHexColor(text)).toBe(false);
      expect(nearestAgentColor(text)).toBeUndefined();
    }
  });

  it('always answers one of the agent colors or nothing, for any hex color', () => {
    fc.assert(
      fc.property(fc.oneof(hexDigits(3), hexDigits(6)), fc.boolean(), (digits, hash) => {
        const value = `${hash ? '#' : ''}${digits}`;
        expect(isHexColor(value)).toBe(true);
        const color = nearestAgentColor(value);
        if (color !== undefined) expect(AgentColor.options).toContain(color);
      }),
    );
  });

  it('reads a three-digit color like its six-digit form', () => {
    fc.assert(
      fc.property(hexDigits(3), (digits) => {
        const doubled = [...digits].map((digit) => digit + digit).join('');
        expect(nearestAgentColor(digits)).toBe(nearestAgentColor(doubled));
      }),
    );
  });
});
