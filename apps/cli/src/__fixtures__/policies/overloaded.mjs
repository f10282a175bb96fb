// Every request fails with 529 overloaded (after the SDK's retries, the run fails).
export default function policy() {
  return { fault: 'overloaded' };
}
