import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "@platform/kit/logger";
import { type ProblemError, problem, problemBody } from "@platform/kit/problems";
import { requestIdFrom } from "./request-id.js";

/** What Node's HTTP parser (llhttp) reports, with the bytes it was given (a Buffer at run time). */
type ParserError = Error & { code?: string; rawPacket?: unknown };

// A request line this long can only be the URL's fault (Node's limit covers line and headers).
const LONG_REQUEST_LINE = 8 * 1024;

const PARSER_DETAILS: Record<string, string> = {
  HPE_INVALID_METHOD: "The request method is not a known HTTP method.",
  HPE_INVALID_URL: "The request target is not a valid URL.",
  HPE_INVALID_VERSION: "The HTTP version is not supported.",
  HPE_INVALID_HEADER_TOKEN: "A header name or value contains a character HTTP does not allow.",
  HPE_INVALID_CONTENT_LENGTH: "The Content-Length header is invalid.",
  HPE_UNEXPECTED_CONTENT_LENGTH: "Content-Length and Transfer-Encoding contradict each other.",
  HPE_INVALID_TRANSFER_ENCODING: "Transfer-Encoding cannot be combined with Content-Length.",
  HPE_INVALID_CHUNK_SIZE: "A chunk of the chunked body has an invalid size.",
  HPE_CHUNK_EXTENSIONS_OVERFLOW: "A chunk of the chunked body carries too long an extension.",
  HPE_INVALID_CONSTANT: "The request is not valid HTTP.",
  HPE_LF_EXPECTED: "The request is not valid HTTP (line ending expected).",
  HPE_CR_EXPECTED: "The request is not valid HTTP (line ending expected).",
};

/** The problem for a request Node's HTTP parser refused before any route could see it. */
export function clientErrorProblem(err: ParserError): ProblemError {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return problem("request-timeout", "The request was not received completely in time.");
  }
  if (err.code === "HPE_HEADER_OVERFLOW") {
    const raw = Buffer.isBuffer(err.rawPacket) ? err.rawPacket : undefined;
    const lineEnd = raw ? raw.indexOf(0x0a) : -1;
    if (raw && (lineEnd === -1 || lineEnd > LONG_REQUEST_LINE)) {
      return problem("uri-too-long", "The request URL is longer than this API accepts.");
    }
    return problem("request-header-fields-too-large", "The request headers are larger than this API accepts (16 KiB).");
  }
  return problem("invalid-request", PARSER_DETAILS[err.code ?? ""] ?? "The request is not valid HTTP.");
}

/**
 * fastify's `clientErrorHandler`: a request the parser refused (a bad request line, header,
 * chunk, Content-Length/Transfer-Encoding, too large headers) never reaches the router, so it
 * is answered here, on the raw socket, in the same problem+json with X-Request-Id as every
 * other error, and logged with the same completion line.
 */
export function clientErrorHandler(docsUrl: string, logger: Logger) {
  return (err: ParserError, socket: Socket): void => {
    // The peer is gone: nobody to answer.
    if (err.code === "ECONNRESET" || socket.destroyed) return;
    const p = clientErrorProblem(err);
    const requestId = requestIdFrom(Buffer.isBuffer(err.rawPacket) ? err.rawPacket : undefined);
    const body = JSON.stringify(problemBody(p, docsUrl, requestId));
    logger.info({ requestId, res: { statusCode: p.status }, parserError: err.code }, "request completed");
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    // The parser cannot resynchronise after an error, so the connection ends with the answer.
    socket.end(
      `HTTP/1.1 ${p.status} ${STATUS_CODES[p.status]}\r\n` +
        "Content-Type: application/problem+json\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
      () => socket.destroy(),
    );
  };
}
