// CannedServer: a plain HTTP server on loopback for the client's unit tests (rpc_client_test,
// cli_test): it answers each connection, one at a time, with the next canned JSON body and
// records every request's head and body. It stands in for CometBFT's RPC.
//
// Thread: the server runs on its own thread; requests() joins it.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include <string>
#include <thread>
#include <vector>

namespace kairos::test {

// Serves `replies` (one JSON body each) to as many connections, one at a time, and records each
// request's head and body.
class CannedServer {
  using tcp = boost::asio::ip::tcp;

 public:
  explicit CannedServer(std::vector<std::string> replies)
      : acceptor_(ioc_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)) {
    thread_ = std::thread([this, replies = std::move(replies)] {
      for (const std::string& body : replies) {
        tcp::socket socket(ioc_);
        acceptor_.accept(socket);
        std::string data;
        boost::system::error_code ec;
        const std::size_t head =
            boost::asio::read_until(socket, boost::asio::dynamic_buffer(data), "\r\n\r\n", ec);
        std::string request = data.substr(0, head);
        const auto cl = request.find("Content-Length: ");
        if (cl != std::string::npos) {
          const std::size_t length = std::stoul(request.substr(cl + 16));
          while (data.size() < head + length && !ec) {
            char buf[4096];
            data.append(buf, socket.read_some(boost::asio::buffer(buf), ec));
          }
          request += data.substr(head, length);
        }
        requests_.push_back(request);
        const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                  "Content-Length: " + std::to_string(body.size()) +
                                  "\r\nConnection: close\r\n\r\n" + body;
        boost::asio::write(socket, boost::asio::buffer(reply), ec);
        socket.shutdown(tcp::socket::shutdown_both, ec);
      }
    });
  }
  ~CannedServer() {
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  // Valid once the replies are all served.
  const std::vector<std::string>& requests() {
    thread_.join();
    return requests_;
  }

 private:
  boost::asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

}  // namespace kairos::test
