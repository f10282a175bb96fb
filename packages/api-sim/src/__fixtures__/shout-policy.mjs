// A policy module for the delegate-sim command: answers with the last user text in capitals.
export default (request) => request.lastUserText.toUpperCase();
