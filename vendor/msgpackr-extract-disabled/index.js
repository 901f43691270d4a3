// msgpackr loads this in a try/catch and falls back to pure JavaScript.
throw new Error('msgpackr native acceleration is not installed');
